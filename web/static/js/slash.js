// Slash commands: typing "/" at the start of the composer lists the agent's available_commands (name,
// description, input hint), filtered as one types; the arrow keys move, Enter or Tab picks, Escape closes.

import { h } from './dom.js';
import { SuggestList, replaceRange } from './popup.js';

/** The commands whose name matches query: prefix matches first, then the rest that contain it. */
export function matchCommands(commands, query) {
  const q = query.toLowerCase();
  const valid = (commands || []).filter((c) => c && typeof c.name === 'string' && c.name);
  const starts = valid.filter((c) => c.name.toLowerCase().startsWith(q));
  const contains = valid.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q));
  return [...starts, ...contains];
}

function inputHint(c) {
  const hint = c && c.input && typeof c.input.hint === 'string' ? c.input.hint : '';
  return hint;
}

/** What the command named name takes, for the composer's hint line ('' when it says nothing). */
export function commandHint(commands, name) {
  const c = (commands || []).find((x) => x && x.name === name);
  if (!c) return '';
  const hint = inputHint(c);
  return hint ? `/${c.name}: ${hint}` : c.description ? `/${c.name} — ${c.description}` : '';
}

export class SlashMenu {
  /** input: the composer's textarea; host: the composer; commands(): the open session's available commands. */
  constructor(input, host, commands) {
    this.input = input;
    this.commands = commands;
    this.list = new SuggestList(input, host, {
      label: 'Commands', cls: 'slash-list', onPick: (c) => this.insert(c),
      render: (c) => [
        h('span.suggest-name', '/' + c.name),
        inputHint(c) ? h('span.suggest-hint', inputHint(c)) : null,
        c.description ? h('span.suggest-desc', c.description) : null,
      ],
    });
    input.addEventListener('input', () => this.update());
    input.addEventListener('click', () => this.update());
    input.addEventListener('blur', () => this.list.close());
    host.addEventListener('keydown', (ev) => {
      if (this.list.key(ev)) {
        ev.preventDefault();
        ev.stopPropagation();
      }
    }, true);
  }

  /** The command word being typed: "/" at the very start and the caret still in that word. */
  word() {
    const v = this.input.value;
    const pos = this.input.selectionStart;
    if (!v.startsWith('/') || pos !== this.input.selectionEnd) return null;
    const word = v.slice(1, pos);
    return /\s/.test(word) ? null : word;
  }

  update() {
    const word = this.word();
    if (word === null) {
      this.list.close();
      return;
    }
    this.list.show(matchCommands(this.commands(), word).slice(0, 50));
  }

  insert(c) {
    const v = this.input.value;
    const end = v.search(/\s|$/);
    replaceRange(this.input, 0, end, `/${c.name} `);
    this.list.close();
    this.input.focus();
  }
}
