// DOM helpers. Everything is built with createElement and textContent; nothing here parses HTML.

/**
 * h('div.cls1.cls2', {attrs…, on: {click: fn}, dataset: {…}}, ...children). Children may be strings (text nodes),
 * nodes, arrays, null/undefined/false (skipped).
 */
export function h(tag, props, ...children) {
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name || 'div');
  if (classes.length) el.className = classes.join(' ');
  if (props && (typeof props !== 'object' || props instanceof Node || Array.isArray(props))) {
    children.unshift(props);
    props = null;
  }
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
      else if (k === 'dataset') { for (const [dk, dv] of Object.entries(v)) if (dv !== null && dv !== undefined) el.dataset[dk] = dv; }
      else if (k === 'class') el.className = [el.className, v].filter(Boolean).join(' ');
      else if (k === 'text') el.textContent = v;
      else if (k === 'style') throw new Error('inline styles are not allowed');
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

// Icons: 24×24 stroke paths (drawn for this UI).
const ICONS = {
  read: ['M4 4h10l6 6v10H4z', 'M14 4v6h6', 'M8 14h8', 'M8 17h6'],
  edit: ['M4 20h4l11-11-4-4L4 16z', 'M13.5 6.5l4 4'],
  delete: ['M4 7h16', 'M9 7V4h6v3', 'M6 7l1 13h10l1-13', 'M10 11v6', 'M14 11v6'],
  move: ['M4 12h14', 'M14 8l4 4-4 4', 'M8 4v4', 'M8 16v4'],
  search: ['M10.5 4a6.5 6.5 0 1 0 0 13 6.5 6.5 0 1 0 0-13z', 'M15.5 15.5L20 20'],
  execute: ['M3 5h18v14H3z', 'M7 10l3 2-3 2', 'M12 15h5'],
  think: ['M12 3a6 6 0 0 0-3.5 10.9V17h7v-3.1A6 6 0 0 0 12 3z', 'M9.5 20h5'],
  fetch: ['M12 3a9 9 0 1 0 0 18 9 9 0 1 0 0-18z', 'M3 12h18', 'M12 3c3 3.5 3 14.5 0 18', 'M12 3c-3 3.5-3 14.5 0 18'],
  switch_mode: ['M4 8h13', 'M14 5l3 3-3 3', 'M20 16H7', 'M10 13l-3 3 3 3'],
  other: ['M5 12h.01', 'M12 12h.01', 'M19 12h.01'],
  menu: ['M4 6h16', 'M4 12h16', 'M4 18h16'],
  close: ['M6 6l12 12', 'M18 6L6 18'],
  plus: ['M12 5v14', 'M5 12h14'],
  send: ['M4 12l16-8-6 16-2-6z', 'M12 14l8-10'],
  stop: ['M7 7h10v10H7z'],
  check: ['M5 12l5 5 9-10'],
  x: ['M7 7l10 10', 'M17 7L7 17'],
  clock: ['M12 3a9 9 0 1 0 0 18 9 9 0 1 0 0-18z', 'M12 7v5l3 2'],
  spinner: ['M12 3a9 9 0 0 1 9 9'],
  shield: ['M12 3l8 3v6c0 5-3.5 8-8 9-4.5-1-8-4-8-9V6z', 'M9 12l2 2 4-4'],
  folder: ['M3 6h6l2 2h10v11H3z'],
  bot: ['M5 8h14v11H5z', 'M12 4v4', 'M9 13h.01', 'M15 13h.01', 'M9 16h6'],
  server: ['M4 4h16v6H4z', 'M4 14h16v6H4z', 'M8 7h.01', 'M8 17h.01'],
  copy: ['M9 9h11v11H9z', 'M15 9V4H4v11h5'],
  retry: ['M20 12a8 8 0 1 1-2.3-5.6', 'M20 4v5h-5'],
  at: ['M12 8a4 4 0 1 0 0 8 4 4 0 1 0 0-8z', 'M16 12v1.5a2.5 2.5 0 0 0 5 0V12a9 9 0 1 0-3.5 7.1'],
  trash: ['M4 7h16', 'M9 7V4h6v3', 'M6 7l1 13h10l1-13'],
};

export function icon(name, cls = '') {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', ('icon ' + cls).trim());
  for (const d of ICONS[name] || ICONS.other) {
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('d', d);
    svg.appendChild(p);
  }
  return svg;
}

export function hasIcon(name) {
  return Object.prototype.hasOwnProperty.call(ICONS, name);
}
