// The session list's search box (filters by title, agent and id as one types) and inline rename (a pencil
// next to each session; Enter saves through PATCH /v1/sessions/{id}, Escape keeps the old title).

import { h, icon } from './dom.js';

/** Whether a session ({title, agent, id}) matches the search text q: every word in one of them. */
export function sessionMatches(s, q) {
  const hay = `${s.title || ''} ${s.agent || ''} ${s.id || ''}`.toLowerCase();
  return String(q || '').toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
}

export class SessionTools {
  /**
   * list: the session list (ul); before: where the search box goes; rename(id, title): the API call,
   * resolving to the stored title; renamed(id, title): the caller's state; canRename(s): whether to offer it;
   * onError(text): says what failed.
   */
  constructor(list, before, { rename, renamed, canRename, onError }) {
    this.list = list;
    this.rename = rename;
    this.renamed = renamed;
    this.canRename = canRename;
    this.onError = onError;
    this.editing = null; // the id whose title is being edited: the list is not re-rendered meanwhile
    this.input = h('input.session-search', {
      type: 'search', id: 'session-search', placeholder: 'Search sessions', 'aria-label': 'Search sessions',
      spellcheck: 'false', autocapitalize: 'off', on: { input: () => this.filter() },
    });
    this.empty = h('p.side-empty.search-empty', { hidden: true }, 'No session matches.');
    before.before(h('div.session-search-box', icon('search'), this.input));
    list.after(this.empty);
  }

  /** Adds the rename button and the search data to one session's list item (s as listed, title shown). */
  decorate(li, s, title) {
    li.dataset.search = JSON.stringify({ title, agent: s.agent || '', id: s.id });
    if (!this.canRename(s)) return;
    li.appendChild(h('button.icon-btn.session-rename', {
      type: 'button', 'aria-label': `Rename ${title}`, title: 'Rename',
      on: { click: (ev) => { ev.preventDefault(); this.edit(li, s.id, title); } },
    }, icon('edit')));
  }

  /** Shows the items that match the search box (call after each render). */
  filter() {
    const q = this.input.value.trim();
    let shown = 0;
    for (const li of this.list.children) {
      let s = {};
      try { s = JSON.parse(li.dataset.search || '{}'); } catch { s = {}; }
      const ok = !q || sessionMatches(s, q);
      li.hidden = !ok;
      if (ok) shown++;
    }
    this.empty.hidden = !q || shown > 0 || !this.list.children.length;
  }

  edit(li, id, title) {
    this.editing = id;
    const field = h('input.session-rename-input', { type: 'text', value: title, 'aria-label': 'Session title', maxlength: '200' });
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      this.editing = null;
      const t = field.value.trim();
      form.remove();
      li.classList.remove('renaming');
      if (!save || !t || t === title) return;
      try {
        this.renamed(id, await this.rename(id, t));
      } catch (err) {
        this.onError(err);
      }
    };
    const form = h('form.session-rename-form', { on: { submit: (ev) => { ev.preventDefault(); finish(true); } } }, field);
    field.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') { ev.preventDefault(); ev.stopPropagation(); finish(false); }
    });
    field.addEventListener('blur', () => finish(true));
    li.querySelector('.session-rename-form')?.remove();
    li.classList.add('renaming');
    li.appendChild(form);
    field.focus();
    field.select();
  }
}
