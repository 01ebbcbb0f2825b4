// A small Markdown subset, parsed into a plain tree (no DOM, so it is testable in node) and then built into DOM
// nodes with createElement/textContent. Agent text never reaches innerHTML.
//
// Blocks: paragraphs, ATX headings, fenced code blocks (``` or ~~~, an unterminated fence runs to the end, which is
// what a streaming message looks like), bullet and ordered lists (nested by indentation), block quotes, thematic
// breaks, GitHub-style tables. Inlines: emphasis and strong (* and _), ~~strikethrough~~, inline code, links and
// autolinks with http(s) URLs only, hard breaks, backslash escapes. Anything else is text. Agent text is untrusted
// and can be megabytes, so every pass is linear in it (blocks: blocks.js, inlines: inline.js); MarkdownStream
// (stream.js) parses a streaming message's unfinished end only, also inside a long paragraph, list, table or quote.

import { safeHref } from './href.js';
import { parseInline, parseWork } from './inline.js';
import { parse } from './blocks.js';
import { MarkdownStream } from './stream.js';

export { safeHref, parseInline, parseWork, parse, MarkdownStream };

// ---------------------------------------------------------------------------------------------------------------
// DOM building

/**
 * Renders Markdown text into a DocumentFragment of `doc`, using `highlight(codeEl, text, lang)` (optional) to fill
 * code blocks.
 */
export function renderMarkdown(text, doc = document, highlight = null) {
  const frag = doc.createDocumentFragment();
  for (const n of renderBlocks(parse(text), doc, highlight)) frag.appendChild(n);
  return frag;
}

/** Renders top-level blocks (from parse or MarkdownStream) into one DOM node each. */
export function renderBlocks(blocks, doc = document, highlight = null) {
  return blocks.map((b) => renderBlock(b, doc, highlight, false));
}

function renderBlock(b, doc, highlight, tight) {
  switch (b.type) {
    case 'heading': {
      // Agent headings sit inside a message, so they are demoted to keep the page outline sane.
      const el = doc.createElement('h' + Math.min(6, b.level + 2));
      el.className = 'md-h md-h' + b.level;
      appendInlines(el, b.children, doc);
      return el;
    }
    case 'paragraph': {
      if (tight) {
        const frag = doc.createDocumentFragment();
        appendInlines(frag, b.children, doc);
        return frag;
      }
      const el = doc.createElement('p');
      appendInlines(el, b.children, doc);
      return el;
    }
    case 'code': {
      const wrap = doc.createElement('div');
      wrap.className = 'code-block';
      const head = doc.createElement('div');
      head.className = 'code-head';
      const lang = doc.createElement('span');
      lang.className = 'code-lang';
      lang.textContent = b.lang || 'text';
      head.appendChild(lang);
      const copy = doc.createElement('button');
      copy.type = 'button';
      copy.className = 'code-copy';
      copy.textContent = 'Copy';
      copy.setAttribute('aria-label', 'Copy code');
      copy.dataset.copy = '1';
      head.appendChild(copy);
      wrap.appendChild(head);
      const pre = doc.createElement('pre');
      const code = doc.createElement('code');
      if (b.lang) code.dataset.lang = b.lang;
      if (highlight) highlight(code, b.text, b.lang);
      else code.textContent = b.text;
      pre.appendChild(code);
      wrap.appendChild(pre);
      return wrap;
    }
    case 'list': {
      const el = doc.createElement(b.ordered ? 'ol' : 'ul');
      if (b.ordered && b.start !== 1) el.setAttribute('start', String(b.start));
      for (const item of b.items) {
        const li = doc.createElement('li');
        for (const c of item) li.appendChild(renderBlock(c, doc, highlight, !b.loose));
        el.appendChild(li);
      }
      return el;
    }
    case 'blockquote': {
      const el = doc.createElement('blockquote');
      for (const c of b.children) el.appendChild(renderBlock(c, doc, highlight, false));
      return el;
    }
    case 'hr':
      return doc.createElement('hr');
    case 'table': {
      const wrap = doc.createElement('div');
      wrap.className = 'table-wrap';
      const table = doc.createElement('table');
      const thead = doc.createElement('thead');
      const tr = doc.createElement('tr');
      b.head.forEach((cell, k) => {
        const th = doc.createElement('th');
        if (b.align[k]) th.className = 'al-' + b.align[k];
        appendInlines(th, cell, doc);
        tr.appendChild(th);
      });
      thead.appendChild(tr);
      table.appendChild(thead);
      const tbody = doc.createElement('tbody');
      for (const row of b.rows) {
        const r = doc.createElement('tr');
        row.forEach((cell, k) => {
          const td = doc.createElement('td');
          if (b.align[k]) td.className = 'al-' + b.align[k];
          appendInlines(td, cell, doc);
          r.appendChild(td);
        });
        tbody.appendChild(r);
      }
      table.appendChild(tbody);
      wrap.appendChild(table);
      return wrap;
    }
    default:
      return doc.createTextNode('');
  }
}

function appendInlines(parent, nodes, doc) {
  for (const n of nodes) {
    switch (n.type) {
      case 'text':
        parent.appendChild(doc.createTextNode(n.text));
        break;
      case 'code': {
        const el = doc.createElement('code');
        el.className = 'md-code';
        el.textContent = n.text;
        parent.appendChild(el);
        break;
      }
      case 'em':
      case 'strong':
      case 'del': {
        const el = doc.createElement(n.type);
        appendInlines(el, n.children, doc);
        parent.appendChild(el);
        break;
      }
      case 'link': {
        const el = doc.createElement('a');
        el.href = n.href;
        el.target = '_blank';
        el.rel = 'noopener noreferrer nofollow';
        appendInlines(el, n.children, doc);
        parent.appendChild(el);
        break;
      }
      case 'br':
        parent.appendChild(doc.createElement('br'));
        break;
      default:
        break;
    }
  }
}
