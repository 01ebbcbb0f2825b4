// The session list's markers: a session "needs you" while a permission request or a question waits in it, and is
// "unread" when a turn ended there after the last one this browser showed. Browser notifications, when the person
// turned them on, announce each new waiting request of a session they are not looking at.

/** The ids of the requests waiting for a person in a listed session (GET /v1/sessions entry). */
export function waitingRequests(s) {
  const out = [];
  for (const p of (s && s.pendingPermissions) || []) if (p && p.id) out.push({ id: p.id, kind: 'permission', title: permissionTitle(p) });
  for (const e of (s && s.pendingElicitations) || []) if (e && e.id) out.push({ id: e.id, kind: 'question', title: e.message || '' });
  return out;
}

function permissionTitle(p) {
  const tc = p.toolCall || {};
  return tc.title || tc.kind || 'a tool call';
}

const MAX_REMEMBERED = 1000;

/**
 * Remembers, per browser and principal, the last ended turn shown of each session, so "unread" survives a reload.
 * A session met for the first time counts as read: a new browser does not mark every old session unread.
 */
export class SeenTurns {
  constructor(storage, principal) {
    this.storage = storage;
    this.key = 'acpgw.seenTurns.' + (principal || 'anonymous');
    this.map = new Map();
    try {
      const raw = storage && storage.getItem(this.key);
      const obj = raw ? JSON.parse(raw) : null;
      if (obj && typeof obj === 'object') for (const [k, v] of Object.entries(obj)) if (typeof v === 'string') this.map.set(k, v);
    } catch { /* a damaged entry starts over */ }
  }

  /** Records the session's latest ended turn as shown. */
  see(s) {
    if (!s || !s.id) return;
    this.set(s.id, lastTurnId(s));
  }

  /** True when a turn ended in s after the last one shown here. */
  unread(s) {
    if (!s || !s.id) return false;
    const last = lastTurnId(s);
    if (!this.map.has(s.id)) {
      this.set(s.id, last);
      return false;
    }
    return last !== '' && this.map.get(s.id) !== last;
  }

  set(id, turnId) {
    if (this.map.get(id) === turnId) return;
    this.map.delete(id);
    this.map.set(id, turnId);
    while (this.map.size > MAX_REMEMBERED) this.map.delete(this.map.keys().next().value);
    try {
      if (this.storage) this.storage.setItem(this.key, JSON.stringify(Object.fromEntries(this.map)));
    } catch { /* storage full or off: markers last until the reload */ }
  }
}

function lastTurnId(s) {
  return (s.lastTurn && s.lastTurn.turnId) || '';
}

const NOTIFY_KEY = 'acpgw.notify';

/**
 * Announces waiting requests with the browser's Notification API, off until the person turns it on (which asks
 * the browser's permission). The first update after a load only learns what already waits, so a reload does not
 * replay old requests; a request is announced once.
 */
export class WaitNotifier {
  constructor({ win = globalThis, storage = null, onOpen = () => {} } = {}) {
    this.win = win;
    this.storage = storage;
    this.onOpen = onOpen;
    this.announced = new Set();
    this.primed = false;
  }

  get supported() {
    return typeof this.win.Notification === 'function';
  }

  /** 'granted', 'denied', 'default' or 'unsupported'. */
  get permission() {
    return this.supported ? this.win.Notification.permission : 'unsupported';
  }

  /** True when the person turned notifications on and the browser allows them. */
  get on() {
    return this.permission === 'granted' && this.read() === 'on';
  }

  /** Asks the browser's permission (from a click) and turns notifications on when granted. */
  async enable() {
    if (!this.supported) return 'unsupported';
    let p = this.win.Notification.permission;
    if (p === 'default') p = await this.win.Notification.requestPermission();
    if (p === 'granted') this.write('on');
    return p;
  }

  disable() {
    this.write('off');
  }

  /**
   * Notes the requests waiting in sessions and announces the new ones. current is the session on screen and
   * visible whether the page is: a request there is already in front of the person.
   */
  update(sessions, { current = '', visible = true } = {}) {
    const waiting = new Set();
    const fresh = [];
    for (const s of sessions || []) {
      for (const r of waitingRequests(s)) {
        waiting.add(r.id);
        if (!this.announced.has(r.id)) fresh.push({ s, r });
      }
    }
    for (const id of [...this.announced]) if (!waiting.has(id)) this.announced.delete(id);
    for (const { r } of fresh) this.announced.add(r.id);
    if (!this.primed) {
      this.primed = true;
      return [];
    }
    const shown = [];
    if (!this.on) return shown;
    for (const { s, r } of fresh) {
      if (visible && s.id === current) continue;
      const title = `${s.agent || 'An agent'} is waiting for you`;
      const body = `${s.title || s.id}: ${r.kind === 'question' ? 'a question' : 'permission for'} ${r.title}`.trim();
      try {
        const n = new this.win.Notification(title, { body, tag: r.id });
        n.onclick = () => {
          try { this.win.focus(); } catch { /* a browser may refuse */ }
          this.onOpen(s.id);
          n.close();
        };
        shown.push({ title, body, session: s.id });
      } catch { /* a browser that refuses the constructor (Android Chrome) shows nothing */ }
    }
    return shown;
  }

  read() {
    try { return this.storage ? this.storage.getItem(NOTIFY_KEY) : null; } catch { return null; }
  }

  write(v) {
    try { if (this.storage) this.storage.setItem(NOTIFY_KEY, v); } catch { /* off until the reload */ }
  }
}
