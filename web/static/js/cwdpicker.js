// The new-session dialog's folder picker: Browse lists the workspace roots, then the directories under the one
// opened (GET /v1/workspace/dirs), one level at a time; "Use this folder" writes it into the cwd field. The
// gateway confines what it lists to the roots, so anything picked here is a cwd it accepts.

import { h, clear, icon } from './dom.js';

/** path with its leading components elided when long, so its end (where one is) stays readable. */
export function shortPath(path) {
  const parts = String(path).split('/');
  return path.length <= 36 || parts.length <= 3 ? path : '…/' + parts.slice(-2).join('/');
}

export class CwdPicker {
  /** field: the cwd input; list(path): the API call; onError(err): says what failed. */
  constructor(field, list, onError) {
    this.field = field;
    this.list = list;
    this.onError = onError;
    this.current = null; // the listing shown: {path, parent, dirs, roots}
    this.button = h('button.btn.btn-ghost.btn-small.cwd-browse', {
      type: 'button', 'aria-expanded': 'false', 'aria-controls': 'cwd-picker', on: { click: () => this.toggle() },
    }, icon('folder'), 'Browse');
    this.here = h('span.cwd-here');
    this.up = h('button.btn.btn-ghost.btn-small.cwd-up', { type: 'button', on: { click: () => this.go(this.current && this.current.parent) } }, 'Up');
    this.use = h('button.btn.btn-primary.btn-small.cwd-use', { type: 'button', on: { click: () => this.pick() } }, 'Use this folder');
    this.dirs = h('ul.cwd-dirs', { 'aria-label': 'Folders' });
    this.panel = h('div.cwd-picker', { id: 'cwd-picker', hidden: true },
      h('div.cwd-bar', this.up, this.here), this.dirs, h('div.cwd-actions', this.use));
    const label = field.closest('label');
    (label || field).after(this.button, this.panel);
  }

  /** Closes the picker (the dialog opens with it closed). */
  reset() {
    this.panel.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
  }

  toggle() {
    if (!this.panel.hidden) {
      this.reset();
      return;
    }
    this.panel.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    this.go(this.field.value.trim() || null, true);
  }

  /** Shows the directories under path (null = the roots); start falls back to the default cwd, then the roots. */
  async go(path, start = false) {
    let res;
    try {
      if (start && !path) {
        const roots = await this.list('');
        res = roots.default ? await this.list(roots.default).catch(() => roots) : roots;
      } else {
        res = await this.list(path || '');
      }
    } catch (err) {
      if (start && path) return this.go(null, true); // the typed path is not listable: begin at the default
      this.onError(err);
      return;
    }
    this.current = res;
    this.render();
  }

  render() {
    const c = this.current;
    this.here.textContent = c.path ? shortPath(c.path) : 'Workspace roots';
    this.here.title = c.path || '';
    this.up.hidden = !c.path;
    this.use.disabled = !c.path;
    clear(this.dirs);
    for (const d of c.dirs || []) {
      this.dirs.appendChild(h('li', h('button.cwd-dir', { type: 'button', dataset: { path: d.path }, on: { click: () => this.go(d.path) } },
        icon('folder'), h('span.cwd-name', d.name))));
    }
    if (!(c.dirs || []).length) this.dirs.appendChild(h('li.cwd-none', 'No folders here.'));
    if (c.truncated) this.dirs.appendChild(h('li.cwd-none', 'More folders are not shown.'));
  }

  pick() {
    if (!this.current || !this.current.path) return;
    this.field.value = this.current.path;
    this.reset();
    this.field.focus();
  }
}
