// @-mentions: typing "@" after a space (or at the start) in the composer lists files of the session's working
// directory from the gateway (GET /v1/sessions/{id}/files, searched as one types, debounced). Picking one
// writes "@path" into the text and adds a resource_link block to the prompt, shown as a chip in the tray.

import { h, icon } from './dom.js';
import { SuggestList, caretWord, replaceRange } from './popup.js';

const DEBOUNCE_MS = 150;
const LIMIT = 20;

/** The prompt block that mentions entry ({path, rel, type} from the files API). */
export function mentionBlock(entry) {
  const uri = 'file://' + String(entry.path).split('/').map(encodeURIComponent).join('/');
  const name = String(entry.rel || entry.path).split('/').pop() || String(entry.path);
  return { type: 'resource_link', uri, name };
}

/** A tray item for entry, shaped as attachments are ({kind, name, size, block}). */
export function mentionItem(entry) {
  return { kind: 'mention', name: entry.rel, size: 0, block: mentionBlock(entry) };
}

export class MentionMenu {
  /**
   * input: the composer's textarea; host: the composer; sessionId(): the open session ('' when none);
   * search(id, q, limit): the files API; onPick(item): add the mention to the prompt.
   */
  constructor(input, host, { sessionId, search, onPick }) {
    this.input = input;
    this.sessionId = sessionId;
    this.search = search;
    this.onPick = onPick;
    this.timer = 0;
    this.asked = 0; // the latest search: older answers are dropped
    this.word = null;
    this.list = new SuggestList(input, host, {
      label: 'Files', cls: 'mention-list', onPick: (e) => this.insert(e),
      render: (e) => [icon(e.type === 'dir' ? 'folder' : 'read'), h('span.suggest-name', e.rel), e.type === 'dir' ? h('span.suggest-hint', 'folder') : null],
    });
    input.addEventListener('input', () => this.update());
    input.addEventListener('blur', () => { clearTimeout(this.timer); this.asked++; this.list.close(); });
    host.addEventListener('keydown', (ev) => {
      if (this.list.key(ev)) {
        ev.preventDefault();
        ev.stopPropagation();
      }
    }, true);
  }

  update() {
    const id = this.sessionId();
    const w = id ? caretWord(this.input, '@') : null;
    this.word = w;
    clearTimeout(this.timer);
    if (!w) {
      this.asked++;
      this.list.close();
      return;
    }
    this.timer = setTimeout(() => this.lookup(id, w.query), DEBOUNCE_MS);
  }

  async lookup(id, q) {
    const n = ++this.asked;
    let res;
    try {
      res = await this.search(id, q, LIMIT);
    } catch (err) {
      if (n === this.asked) this.list.show([], err && err.status === 403 ? 'Only people who may prompt this session can list its files.' : 'Could not list files.');
      return;
    }
    if (n !== this.asked || !this.word) return;
    const files = Array.isArray(res && res.files) ? res.files : [];
    this.list.show(files, q ? `No file matches “${q}”.` : 'No files.');
  }

  insert(entry) {
    const w = this.word || caretWord(this.input, '@');
    if (w) replaceRange(this.input, w.start, w.end, `@${entry.rel} `);
    this.list.close();
    this.onPick(mentionItem(entry));
    this.input.focus();
  }
}
