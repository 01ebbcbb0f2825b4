// A suggestion list under the composer's caret word (slash commands, @-mentions): a listbox the textarea keeps
// focus over (aria-activedescendant), driven by the arrow keys, Enter or Tab to pick and Escape to close.

import { h, clear } from './dom.js';

let nextId = 1;

export class SuggestList {
  /**
   * input: the textarea; host: where the list is placed (above the textarea); label: its accessible name;
   * onPick(item): an option was chosen; render(item): its content nodes.
   */
  constructor(input, host, { label, cls, onPick, render }) {
    this.input = input;
    this.onPick = onPick;
    this.renderItem = render;
    this.items = [];
    this.active = 0;
    this.id = `suggest-${nextId++}`;
    this.el = h(`ul.suggest.${cls}`, { id: this.id, role: 'listbox', 'aria-label': label, hidden: true });
    // A press on an option must not take focus from the textarea first.
    this.el.addEventListener('mousedown', (ev) => ev.preventDefault());
    host.prepend(this.el);
  }

  get open() {
    return !this.el.hidden;
  }

  /** Shows items (an empty list closes it; with emptyText, says so instead). */
  show(items, emptyText = '') {
    this.items = items;
    this.active = 0;
    clear(this.el);
    if (!items.length && !emptyText) {
      this.close();
      return;
    }
    items.forEach((it, i) => {
      this.el.appendChild(h('li.suggest-item', {
        id: `${this.id}-${i}`, role: 'option', 'aria-selected': String(i === 0),
        on: { click: () => this.pick(i) },
      }, this.renderItem(it)));
    });
    if (!items.length) this.el.appendChild(h('li.suggest-empty', { role: 'presentation' }, emptyText));
    this.el.hidden = false;
    this.input.setAttribute('aria-controls', this.id);
    this.input.setAttribute('aria-expanded', 'true');
    this.mark();
  }

  close() {
    if (this.el.hidden) return;
    this.el.hidden = true;
    this.items = [];
    clear(this.el);
    this.input.removeAttribute('aria-activedescendant');
    this.input.setAttribute('aria-expanded', 'false');
  }

  mark() {
    [...this.el.querySelectorAll('.suggest-item')].forEach((li, i) => {
      li.setAttribute('aria-selected', String(i === this.active));
      if (i === this.active) {
        this.input.setAttribute('aria-activedescendant', li.id);
        li.scrollIntoView({ block: 'nearest' });
      }
    });
  }

  pick(i) {
    const it = this.items[i];
    this.close();
    if (it !== undefined) this.onPick(it);
  }

  /** Handles a keydown while open; returns whether it was the list's. */
  key(ev) {
    if (!this.open || ev.isComposing) return false; // an IME's Enter ends its composition, not a pick
    const n = this.items.length;
    switch (ev.key) {
      case 'ArrowDown':
        if (n) { this.active = (this.active + 1) % n; this.mark(); }
        return true;
      case 'ArrowUp':
        if (n) { this.active = (this.active - 1 + n) % n; this.mark(); }
        return true;
      case 'Enter':
      case 'Tab':
        if (ev.shiftKey || !n) return false;
        this.pick(this.active);
        return true;
      case 'Escape':
        this.close();
        return true;
      default:
        return false;
    }
  }
}

/** The word the caret is in, when it starts with trigger at the start of the text or after a space. */
export function caretWord(input, trigger) {
  const pos = input.selectionStart;
  if (pos !== input.selectionEnd) return null;
  const before = input.value.slice(0, pos);
  const at = before.lastIndexOf(trigger);
  if (at < 0 || (at > 0 && !/\s/.test(before[at - 1]))) return null;
  const word = before.slice(at + 1);
  if (/\s/.test(word)) return null;
  return { start: at, end: pos, query: word };
}

/** Replaces [start, end) of the input's text with text and puts the caret after it. */
export function replaceRange(input, start, end, text) {
  input.setRangeText(text, start, end, 'end');
  input.dispatchEvent(new Event('input', { bubbles: true }));
}
