// Attachments on screen: the chips of the composer's tray (paste, drop or pick a file; remove it again) and of
// the user's messages in the transcript (image thumbnail, file chip). Reading and limits are attach.js's.

import { h, clear, icon } from './dom.js';
import { readAttachment, fmtBytes, resourceName, MAX_ATTACHMENTS, IMAGE_TYPES, AttachError } from './attach.js';

const MAX_THUMB_B64 = 8 << 20;

function imageSrc(block) {
  const mime = String(block.mimeType || '').toLowerCase();
  const data = typeof block.data === 'string' ? block.data : '';
  if (!IMAGE_TYPES.includes(mime) || !data || data.length > MAX_THUMB_B64 || !/^[A-Za-z0-9+/]+=*$/.test(data)) return null;
  return `data:${mime};base64,${data}`;
}

function b64Size(data) {
  const s = String(data || '');
  return Math.max(0, Math.floor((s.length * 3) / 4) - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0));
}

/**
 * A chip for an image or embedded-resource content block: thumbnail or file icon, name, size. With onRemove,
 * a remove button. Returns null for other blocks.
 */
export function attachmentChip(block, onRemove = null, name = '') {
  if (!block || typeof block !== 'object') return null;
  let body;
  let label;
  let kind;
  if (block.type === 'image') {
    kind = 'image';
    const src = imageSrc(block);
    label = name || `Image (${block.mimeType || 'unknown type'})`;
    body = [src ? h('img.attach-thumb', { src, alt: label }) : icon('other'),
      h('span.attach-name', label), h('span.attach-size', fmtBytes(b64Size(block.data)))];
  } else if (block.type === 'resource' && block.resource && typeof block.resource === 'object') {
    kind = 'file';
    const r = block.resource;
    label = name || resourceName(r.uri);
    const size = typeof r.text === 'string' ? new TextEncoder().encode(r.text).length : b64Size(r.blob);
    body = [icon('read'), h('span.attach-name', { title: String(r.uri || '') }, label), h('span.attach-size', fmtBytes(size))];
  } else if (block.type === 'resource_link' && typeof block.uri === 'string') {
    // A file mentioned with "@": a link the agent reads itself, no content.
    kind = 'mention';
    label = name || block.name || resourceName(block.uri);
    body = [icon('at'), h('span.attach-name', { title: block.uri }, label)];
  } else {
    return null;
  }
  return h('div.attach-chip', { dataset: { kind } }, body,
    onRemove ? h('button.icon-btn.attach-remove', { type: 'button', 'aria-label': `Remove ${label}`, title: `Remove ${label}`, on: { click: onRemove } }, icon('close')) : null);
}

/** The composer's attachments: add from files, list as chips, remove, clear; errors are said in `error`. */
export class AttachmentTray {
  /** els: {list, error, button, input}; onChange() runs after the list changed. */
  constructor(els, onChange = () => {}) {
    this.els = els;
    this.onChange = onChange;
    this.items = []; // {kind, name, size, block}
    this.caps = { image: false, file: false };
    els.button.addEventListener('click', () => els.input.click());
    els.input.addEventListener('change', () => {
      const files = [...els.input.files];
      els.input.value = '';
      this.add(files);
    });
  }

  get accepts() {
    return this.caps.image || this.caps.file;
  }

  setCaps(caps) {
    this.caps = caps;
    this.els.button.hidden = !this.accepts;
    this.els.input.accept = this.caps.file ? '' : IMAGE_TYPES.join(',');
  }

  /** Reads files in order; the ones that cannot be attached are named in the error line. */
  async add(files) {
    const errors = [];
    for (const f of files) {
      if (this.items.length >= MAX_ATTACHMENTS) {
        errors.push(`At most ${MAX_ATTACHMENTS} attachments per prompt.`);
        break;
      }
      try {
        this.items.push(await readAttachment(f, this.caps));
      } catch (err) {
        errors.push(err instanceof AttachError ? err.message : `“${f.name}” could not be read.`);
      }
    }
    this.showError(errors.join(' '));
    this.render();
  }

  /** Adds a prepared item (a mention): kept once per uri, not counted against the attachment limit. */
  addItem(item) {
    const uri = item.block && item.block.uri;
    if (!uri || !this.items.some((x) => x.block && x.block.uri === uri)) this.items.push(item);
    this.render();
  }

  remove(item) {
    this.items = this.items.filter((x) => x !== item);
    this.showError('');
    this.render();
    this.els.input.form?.querySelector('textarea')?.focus();
  }

  /** Drops the given attachments (the ones a prompt took), keeping any added meanwhile. */
  discard(items) {
    this.items = this.items.filter((x) => !items.includes(x));
    this.render();
  }

  /** Puts back attachments a queued prompt held (it went back into the composer), in front of the others. */
  restore(items) {
    if (!items.length) return;
    this.items = [...items, ...this.items.filter((x) => !items.includes(x))];
    this.render();
  }

  clear() {
    this.items = [];
    this.showError('');
    this.render();
  }

  showError(text) {
    this.els.error.textContent = text;
    this.els.error.hidden = !text;
  }

  render() {
    const list = clear(this.els.list);
    for (const it of this.items) list.appendChild(h('li', attachmentChip(it.block, () => this.remove(it), it.name)));
    list.hidden = !this.items.length;
    this.onChange();
  }
}
