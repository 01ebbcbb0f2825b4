// An agent's questions (ACP `elicitation/create`): a form built from the request's restricted JSON Schema, or a
// link to open, shown above the composer and answered over REST. The gateway checks every answer against the
// schema; the form only converts what was typed into the schema's types.

import { h, clear } from './dom.js';
import { safeHref } from './href.js';

/** The fields of a form elicitation's schema, in the schema's order: what to render and how to read it back. */
export function formFields(schema) {
  const props = (schema && typeof schema.properties === 'object' && schema.properties) || {};
  const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
  return Object.entries(props).map(([name, p]) => {
    p = p && typeof p === 'object' ? p : {};
    const f = {
      name, type: p.type, title: typeof p.title === 'string' && p.title ? p.title : name,
      description: typeof p.description === 'string' ? p.description : '', required: required.has(name),
      default: p.default, format: p.format || '', min: p.minimum, max: p.maximum,
      minLength: p.minLength, maxLength: p.maxLength, choices: null, multiple: false,
    };
    const opts = (list, key) => list.map((o) => (key ? { value: String(o.const), label: String(o.title || o.const) } : { value: String(o), label: String(o) }));
    if (p.type === 'string' && Array.isArray(p.oneOf)) f.choices = opts(p.oneOf, true);
    else if (p.type === 'string' && Array.isArray(p.enum)) f.choices = opts(p.enum, false);
    else if (p.type === 'array' && p.items) {
      f.multiple = true;
      f.choices = Array.isArray(p.items.anyOf) ? opts(p.items.anyOf, true) : opts(Array.isArray(p.items.enum) ? p.items.enum : [], false);
    }
    return f;
  });
}

/**
 * The content of an accepted form from what the user entered (raw: name → string, boolean or string[]): numbers
 * become numbers, empty optional fields are left out. Returns {content} or {error} naming the field.
 */
export function contentOf(fields, raw) {
  const content = {};
  for (const f of fields) {
    const v = raw[f.name];
    if (f.type === 'boolean') { content[f.name] = !!v; continue; }
    if (f.multiple) { if ((v || []).length || f.required) content[f.name] = v || []; continue; }
    const s = typeof v === 'string' ? v : '';
    if (s === '') {
      if (f.required) return { error: `${f.title} is required.` };
      continue;
    }
    if (f.type === 'number' || f.type === 'integer') {
      const n = Number(s);
      if (!Number.isFinite(n) || (f.type === 'integer' && !Number.isInteger(n))) return { error: `${f.title} must be ${f.type === 'integer' ? 'a whole number' : 'a number'}.` };
      content[f.name] = n;
    } else {
      content[f.name] = s;
    }
  }
  return { content };
}

const INPUT_TYPE = { email: 'email', uri: 'url', date: 'date', 'date-time': 'text' };

function fieldInput(f, id) {
  if (f.type === 'boolean') return h('input', { type: 'checkbox', id, name: f.name, checked: f.default === true });
  if (f.multiple) {
    const def = Array.isArray(f.default) ? f.default.map(String) : [];
    return h('span.elicit-choices', { id, role: 'group' }, f.choices.map((c) => h('label.elicit-choice',
      h('input', { type: 'checkbox', name: f.name, value: c.value, checked: def.includes(c.value) }), c.label)));
  }
  if (f.choices) {
    const sel = h('select', { id, name: f.name, required: f.required },
      f.required && f.default === undefined ? h('option', { value: '' }, 'Choose…') : null,
      !f.required ? h('option', { value: '' }, '—') : null,
      f.choices.map((c) => h('option', { value: c.value }, c.label)));
    if (f.default !== undefined) sel.value = String(f.default);
    return sel;
  }
  const num = f.type === 'number' || f.type === 'integer';
  const input = h('input', {
    id, name: f.name, required: f.required, type: num ? 'number' : INPUT_TYPE[f.format] || 'text',
    step: num ? (f.type === 'integer' ? '1' : 'any') : undefined, min: f.min, max: f.max,
    minlength: f.minLength, maxlength: f.maxLength,
  });
  if (f.default !== undefined && f.default !== null) input.value = String(f.default);
  return input;
}

function readForm(form, fields) {
  const raw = {};
  for (const f of fields) {
    if (f.multiple) raw[f.name] = [...form.querySelectorAll(`input[type=checkbox]`)].filter((i) => i.name === f.name && i.checked).map((i) => i.value);
    else {
      const el = [...form.elements].find((e) => e.name === f.name);
      raw[f.name] = f.type === 'boolean' ? !!(el && el.checked) : el ? el.value : '';
    }
  }
  return raw;
}

/**
 * The open elicitations of one session: their cards, kept in a panel before `before` (the composer). onCount(n)
 * hears how many wait after each change (the session list and the tab's title count them).
 */
export class Elicitations {
  constructor(sessionId, before, answer, onCount = () => {}) {
    this.sessionId = sessionId;
    this.answer = answer; // (sessionId, requestId, body) → Promise
    this.onCount = onCount;
    this.cards = new Map(); // gateway request id → {el, req, state}
    this.panel = h('section.elicitations', { 'aria-label': 'Questions from the agent', hidden: true });
    if (before && before.parentNode) before.parentNode.insertBefore(this.panel, before);
  }

  /** Handles a frame if it is one of elicitation's; reports whether it was. */
  onFrame(msg) {
    const p = msg.params || {};
    switch (msg.method) {
      case 'elicitation/create':
        if (msg.id !== undefined && msg.id !== null) this.show(String(msg.id), p);
        return true;
      case '_gateway/elicitation_resolved':
        this.resolved(p.requestId, p.outcome || {});
        return true;
      case 'elicitation/complete':
        for (const [id, c] of this.cards) if (c.req.elicitationId === p.elicitationId) this.remove(id);
        return true;
      case '_gateway/turn_ended':
        // A link still waiting for its page: the turn it belonged to is over, nothing will complete it.
        for (const [id, c] of this.cards) if (c.state === 'waiting') this.remove(id);
        return false; // the app handles the turn's end
    }
    return false;
  }

  /** Shows the pending elicitations of a session's detail (after a load or a resync). */
  load(list) {
    for (const e of Array.isArray(list) ? list : []) if (e && e.id) this.show(e.id, e);
  }

  show(id, req) {
    if (this.cards.has(id)) return;
    const card = { req, state: 'open', el: null };
    this.cards.set(id, card);
    card.el = req.mode === 'url' ? this.urlCard(id, req) : this.formCard(id, req);
    this.panel.appendChild(card.el);
    this.panel.hidden = false;
    this.onCount(this.cards.size);
  }

  formCard(id, req) {
    const fields = formFields(req.requestedSchema);
    const status = h('p.elicit-status', { role: 'status' });
    const form = h('form.elicit-form', { dataset: { elicitation: id }, novalidate: true },
      h('p.elicit-from', 'The agent asks:'), h('p.elicit-message', req.message || ''),
      fields.map((f, i) => {
        const fid = `elicit-${id}-${i}`;
        return h('div.elicit-field', { dataset: { field: f.name } },
          h('label', { for: fid }, f.title, f.required ? h('span.elicit-req', { 'aria-hidden': 'true' }, ' *') : null),
          fieldInput(f, fid), f.description ? h('small.elicit-help', f.description) : null);
      }),
      status,
      h('div.elicit-actions',
        h('button.btn.btn-ghost', { type: 'button', on: { click: () => this.send(id, { action: 'cancel' }, status) } }, 'Cancel'),
        h('button.btn', { type: 'button', on: { click: () => this.send(id, { action: 'decline' }, status) } }, 'Decline'),
        h('button.btn.btn-primary', { type: 'submit' }, 'Send')));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const { content, error } = contentOf(fields, readForm(form, fields));
      if (error) { status.textContent = error; return; }
      this.send(id, { action: 'accept', content }, status);
    });
    return form;
  }

  urlCard(id, req) {
    const href = safeHref(req.url); // the gateway refuses others too; never offered as a link
    const u = href ? new URL(href) : null;
    const status = h('p.elicit-status', { role: 'status' });
    const open = () => {
      window.open(u.href, '_blank', 'noopener,noreferrer');
      this.send(id, { action: 'accept' }, status);
    };
    return h('div.elicit-form', { dataset: { elicitation: id, mode: 'url' } },
      h('p.elicit-from', 'The agent asks you to open a page:'), h('p.elicit-message', req.message || ''),
      u ? h('p.elicit-url', h('strong', u.host), ' ', h('span.elicit-href', u.href)) : h('p.elicit-url', 'The link is not a web address.'),
      status,
      h('div.elicit-actions',
        h('button.btn', { type: 'button', on: { click: () => this.send(id, { action: 'decline' }, status) } }, 'Decline'),
        u ? h('button.btn.btn-primary', { type: 'button', on: { click: open } }, `Open ${u.host}`) : null));
  }

  async send(id, body, status) {
    const card = this.cards.get(id);
    if (!card || card.state !== 'open') return;
    status.textContent = 'Sending…';
    try {
      await this.answer(this.sessionId, id, body);
      if (this.cards.get(id) === card && card.state === 'open') status.textContent = '';
    } catch (err) {
      const gone = !!err && (err.status === 404 || err.status === 409); // an ApiError: answered elsewhere, or gone
      status.textContent = gone ? 'This question was already answered.' : (err && err.message) || 'Could not send the answer.';
      if (gone) this.remove(id);
    }
  }

  resolved(id, outcome) {
    const card = this.cards.get(id);
    if (!card) return;
    if (card.req.mode === 'url' && outcome.action === 'accept') {
      // Pending until the agent says the interaction at the URL is over (elicitation/complete).
      card.state = 'waiting';
      card.el.dataset.state = 'waiting';
      const actions = card.el.querySelector('.elicit-actions');
      if (actions) clear(actions);
      card.el.querySelector('.elicit-status').textContent = 'Waiting for the page to finish…';
      return;
    }
    this.remove(id);
  }

  remove(id) {
    const card = this.cards.get(id);
    if (!card) return;
    card.el.remove();
    this.cards.delete(id);
    this.panel.hidden = this.cards.size === 0;
    this.onCount(this.cards.size);
  }

  /** Forgets every card (a resync reloads the pending ones). */
  reset() {
    for (const id of [...this.cards.keys()]) this.remove(id);
  }

  dispose() {
    this.reset();
    this.panel.remove();
  }
}
