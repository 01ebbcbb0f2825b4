// Unit tests of the UI's pure modules (Markdown parser, highlighter, diff, elapsed time, ANSI terminal, attachments,
// who did what, sharing),
// run in node without a browser.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, parseInline, safeHref, MarkdownStream, parseWork } from '../web/static/js/markdown.js';
import { parseInlineWhole } from '../web/static/js/inline.js';
import { tokenize, languageOf } from '../web/static/js/highlight.js';
import { unifiedDiff, formatUnified, diffLines } from '../web/static/js/diff.js';
import { fmtElapsed } from '../web/static/js/elapsed.js';
import { legacyModesSuperseded } from '../web/static/js/modes.js';
import { TermBuffer, cssColor } from '../web/static/js/ansi.js';
import { renderLine, styleClasses, snapshotTerminals } from '../web/static/js/term.js';
import {
  attachCaps, readAttachment, promptBlocks, fmtBytes, resourceName, AttachError, MAX_IMAGE_BYTES, MAX_TEXT_BYTES,
} from '../web/static/js/attach.js';
import { statusView, acceptsPrompt, promptErrorText } from '../web/static/js/status.js';
import { actorName, permissionVerdict, watcherRows, initials } from '../web/static/js/people.js';
import {
  sharingOffered, shareRows, principalIdProblem, shareErrorText, isForbidden, VIEWER_NOTICE,
} from '../web/static/js/sharing.js';

// Strips the tree to something short to compare.
function inl(nodes) {
  return nodes.map((n) => {
    switch (n.type) {
      case 'text': return n.text;
      case 'code': return `<code>${n.text}</code>`;
      case 'em': return `<em>${inl(n.children)}</em>`;
      case 'strong': return `<strong>${inl(n.children)}</strong>`;
      case 'link': return `<a ${n.href}>${inl(n.children)}</a>`;
      case 'br': return '<br>';
      case 'del': return `<del>${inl(n.children)}</del>`;
      default: return `?${n.type}`;
    }
  }).join('');
}

test('inline: emphasis, strong, code, escapes', () => {
  assert.equal(inl(parseInline('a *b* **c** ***d*** _e_ __f__')), 'a <em>b</em> <strong>c</strong> <strong><em>d</em></strong> <em>e</em> <strong>f</strong>');
  assert.equal(inl(parseInline('snake_case_name and 2 * 3 * 4')), 'snake_case_name and 2 * 3 * 4');
  assert.equal(inl(parseInline('`a *not em* b` and ``x ` y``')), '<code>a *not em* b</code> and <code>x ` y</code>');
  assert.equal(inl(parseInline('\\*literal\\* \\`tick')), '*literal* `tick');
  assert.equal(inl(parseInline('unclosed *star and `tick')), 'unclosed *star and `tick');
  assert.equal(inl(parseInline('line one  \nline two\nthree')), 'line one<br>line two\nthree');
});

test('inline: links allow http(s) only', () => {
  assert.equal(inl(parseInline('[site](https://example.com/a?b=1)')), '<a https://example.com/a?b=1>site</a>');
  assert.equal(inl(parseInline('[x](javascript:alert(1))')), 'x');
  assert.equal(inl(parseInline('[x](data:text/html,hi)')), 'x');
  assert.equal(inl(parseInline('[x](/relative)')), 'x');
  assert.equal(inl(parseInline('see https://example.com/path.')), 'see <a https://example.com/path>https://example.com/path</a>.');
  assert.equal(inl(parseInline('<https://a.example/>')), '<a https://a.example/>https://a.example/</a>');
  assert.equal(inl(parseInline('(https://example.com/x_(y))')), '(<a https://example.com/x_(y)>https://example.com/x_(y)</a>)');
  assert.equal(safeHref('JAVASCRIPT:alert(1)'), null);
  assert.equal(safeHref('https://ok.example/'), 'https://ok.example/');
  assert.equal(safeHref(' http://x.example '), 'http://x.example/');
});

test('blocks: headings, paragraphs, rules, quotes', () => {
  const b = parse('# Title\n\nPara one\ncontinues.\n\n---\n\n> quoted\n> text\n\n###### six #');
  assert.deepEqual(b.map((x) => x.type), ['heading', 'paragraph', 'hr', 'blockquote', 'heading']);
  assert.equal(b[0].level, 1);
  assert.equal(inl(b[1].children), 'Para one\ncontinues.');
  assert.equal(b[3].children[0].type, 'paragraph');
  assert.equal(b[4].level, 6);
  assert.equal(inl(b[4].children), 'six');
});

test('blocks: fenced code, including an unterminated (streaming) fence', () => {
  const b = parse('Before\n```go\nfunc main() {\n\tfmt.Println("*x*")\n}\n```\nAfter');
  assert.deepEqual(b.map((x) => x.type), ['paragraph', 'code', 'paragraph']);
  assert.equal(b[1].lang, 'go');
  assert.equal(b[1].text, 'func main() {\n    fmt.Println("*x*")\n}');
  const s = parse('```py\nprint(1)\n');
  assert.equal(s.length, 1);
  assert.equal(s[0].type, 'code');
  assert.equal(s[0].closed, false);
  assert.equal(s[0].text, 'print(1)\n');
  const t = parse('~~~\n```\nstill code\n~~~');
  assert.equal(t[0].text, '```\nstill code');
});

test('blocks: lists, nested, ordered with start, loose vs tight', () => {
  const b = parse('- one\n- two\n  - nested\n- three\n\n3. c\n4. d');
  assert.equal(b[0].type, 'list');
  assert.equal(b[0].ordered, false);
  assert.equal(b[0].loose, false);
  assert.equal(b[0].items.length, 3);
  assert.equal(b[0].items[1][1].type, 'list');
  assert.equal(b[1].ordered, true);
  assert.equal(b[1].start, 3);
  const loose = parse('1. a\n\n2. b');
  assert.equal(loose.length, 1);
  assert.equal(loose[0].loose, true);
  const interrupt = parse('Steps:\n1. first\n2. second');
  assert.deepEqual(interrupt.map((x) => x.type), ['paragraph', 'list']);
});

test('parser survives hostile input', () => {
  const deep = '>'.repeat(500) + ' x\n' + '- '.repeat(500) + 'y\n' + '*'.repeat(2000) + '[' .repeat(2000);
  const t0 = Date.now();
  const out = parse(deep);
  assert.ok(Array.isArray(out));
  assert.ok(Date.now() - t0 < 2000, 'parsing pathological input took too long');
  assert.deepEqual(parse(''), []);
  assert.deepEqual(parse(null), []);
});

test('highlighter tokens', () => {
  const toks = tokenize('func main() { s := "hi" // c\n return 42 }', 'go');
  const by = (type) => toks.filter((t) => t.type === type).map((t) => t.text);
  assert.deepEqual(by('kw'), ['func', 'return']);
  assert.deepEqual(by('str'), ['"hi"']);
  assert.deepEqual(by('com'), ['// c']);
  assert.deepEqual(by('num'), ['42']);
  assert.deepEqual(by('fn'), ['main']);
  assert.equal(toks.map((t) => t.text).join(''), 'func main() { s := "hi" // c\n return 42 }');
  assert.equal(languageOf('TypeScript'), 'js');
  assert.equal(languageOf('brainfuck'), '');
  assert.deepEqual(tokenize('<b>x</b>', 'unknown'), [{ type: 'plain', text: '<b>x</b>' }]);
  const py = tokenize('def f(x):\n    return """doc"""  # note', 'python');
  assert.ok(py.some((t) => t.type === 'str' && t.text === '"""doc"""'));
  assert.ok(py.some((t) => t.type === 'com' && t.text === '# note'));
  const json = tokenize('{"a": 1, "b": true}', 'json');
  assert.ok(json.some((t) => t.type === 'type' && t.text === '"a"'));
  assert.ok(json.some((t) => t.type === 'lit' && t.text === 'true'));
});

test('diff: unified hunks with context', () => {
  const old = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n';
  const neu = 'a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n';
  const d = unifiedDiff(old, neu);
  assert.equal(d.added, 2);
  assert.equal(d.removed, 1);
  assert.deepEqual(d.hunks.map((x) => x.header), ['@@ -1,6 +1,6 @@', '@@ -8,3 +8,4 @@']);
  assert.equal(formatUnified('f.txt', null, 'x\n'), '--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+x');
  assert.deepEqual(unifiedDiff('same\n', 'same\n').hunks, []);
  const ops = diffLines('x\ny\nz', 'x\nz\nw');
  assert.deepEqual(ops.map((o) => o.op + o.text), [' x', '-y', ' z', '+w']);
});

test('blocks: tables and strikethrough', () => {
  const b = parse('| Name | Size |\n|:-----|-----:|\n| `a|b` | 1 |\n| **c** | 2 |\n\nafter');
  assert.deepEqual(b.map((x) => x.type), ['table', 'paragraph']);
  assert.deepEqual(b[0].align, ['left', 'right']);
  assert.deepEqual(b[0].head.map(inl), ['Name', 'Size']);
  assert.deepEqual(b[0].rows.map((r) => r.map(inl)), [['<code>a|b</code>', '1'], ['<strong>c</strong>', '2']]);
  assert.deepEqual(parse('a | b\n--|--\n1 | 2')[0].rows.map((r) => r.map(inl)), [['1', '2']]);
  assert.deepEqual(parse('just | a pipe').map((x) => x.type), ['paragraph']);
  const del = parseInline('~~gone~~ and ~single~');
  assert.equal(del[0].type, 'del');
  assert.equal(del[0].children[0].text, 'gone');
  assert.equal(del[1].text, ' and ~single~');
});

test('a table may follow a paragraph line directly', () => {
  assert.deepEqual(parse('Results:\n| a | b |\n|---|---|\n| 1 | 2 |').map((x) => x.type), ['paragraph', 'table']);
});

test('elapsed time: tenths while starting, minutes and seconds for turns', () => {
  assert.equal(fmtElapsed(0, { tenths: true }), '0.0 s');
  assert.equal(fmtElapsed(1460, { tenths: true }), '1.4 s');
  assert.equal(fmtElapsed(59999, { tenths: true }), '59.9 s');
  assert.equal(fmtElapsed(61000, { tenths: true }), '1:01');
  assert.equal(fmtElapsed(7999), '0:07');
  assert.equal(fmtElapsed(95000), '1:35');
  assert.equal(fmtElapsed(3723000), '1:02:03');
  assert.equal(fmtElapsed(-500), '0:00'); // a browser clock behind the gateway's
  assert.equal(fmtElapsed(NaN), '0:00');
});

test('config options of category mode supersede the legacy modes selector; other categories do not', () => {
  assert.equal(legacyModesSuperseded([{ id: 'mode', category: 'mode' }, { id: 'model', category: 'model' }]), true);
  assert.equal(legacyModesSuperseded([{ id: 'model', category: 'model' }]), false);
  assert.equal(legacyModesSuperseded([{ id: 'effort' }]), false);
  assert.equal(legacyModesSuperseded(undefined), false);
});

test('hostile inline patterns keep their structure: literal runs stay text, real emphasis still matches', () => {
  const args = 'f(*args, **kwargs) '.repeat(2000);
  assert.deepEqual(parseInline(args), [{ type: 'text', text: args }]);
  const mixed = '**a _b '.repeat(8000);
  assert.deepEqual(parseInline(mixed), [{ type: 'text', text: mixed }]);
  // Matched delimiters among many unmatched ones: each repetition is its own em holding a strong.
  const nested = parseInline('*a **b** c* _x '.repeat(3000));
  assert.equal(nested.filter((n) => n.type === 'em').length, 3000);
  assert.equal(inl(nested.slice(0, 2)), '<em>a <strong>b</strong> c</em> _x ');
  // Unclosed brackets, angle brackets and backticks, then one of each that closes.
  const brackets = parseInline('['.repeat(20000) + 'a](https://x.example/)');
  assert.equal(inl(brackets), '['.repeat(19999) + '<a https://x.example/>a</a>');
  const links = parseInline('['.repeat(5000) + '[a](https://x.example/)'.repeat(2000));
  assert.deepEqual(links.map((n) => n.type), ['text', ...Array(2000).fill('link')]);
  assert.equal(links[0].text, '['.repeat(5000));
  assert.equal(inl(parseInline('<'.repeat(20000) + 'https://y.example/>')), '<'.repeat(19999) + '<a https://y.example/>https://y.example/</a>');
  assert.equal(inl(parseInline('``'.repeat(10000) + ' `z`')), '``'.repeat(10000) + ' <code>z</code>');
  assert.equal(inl(parseInline('[x](' + '('.repeat(20000))), '[x](' + '('.repeat(20000));
  // Emphasis nested past the limit stays literal instead of building a tree too deep to render.
  const deep = parseInline('*a '.repeat(1000) + 'b' + ' c*'.repeat(1000));
  let depth = 0;
  for (let n = deep.find((x) => x.type === 'em'); n; n = n.children.find((x) => x.type === 'em')) depth++;
  assert.ok(depth > 0 && depth <= 32, `emphasis depth ${depth}`);
  // Many soft and hard breaks in one paragraph; a delimiter row with a long run of spaces is not a table.
  const breaks = parseInline('a  \nb \n'.repeat(20000));
  assert.equal(breaks.filter((n) => n.type === 'br').length, 20000);
  assert.equal(inl(breaks.slice(0, 3)), 'a<br>b\na');
  assert.deepEqual(parse('a|b\n|-' + ' '.repeat(20000) + 'x').map((x) => x.type), ['paragraph']);
  assert.deepEqual(parse('a|b\n-' + ' '.repeat(20000) + '|-').map((x) => x.type), ['table']);
  assert.equal(inl(parseInline('**bold *and em* done** ~~x~~ a*b*c')), '<strong>bold <em>and em</em> done</strong> <del>x</del> a<em>b</em>c');
});

test('a streamed message parses to the same blocks as the whole, and finished blocks are handed out once', () => {
  const doc = '# Plan\r\n\r\nIntro *text* that\nwraps.\n\n- one\n- two\n\n  more of two\n\n3. x\n4. y\n\n> quote\nlazy\n\n'
    + '| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nconst a = 1;\n\n```\n\nPara\n---\n\n~~~\nopen fence\n'.repeat(3) + 'tail *end*';
  const whole = parse(doc);
  for (const size of [1, 2, 3, 7, 50]) {
    const stream = new MarkdownStream();
    const done = [];
    let open = [];
    for (let i = 0; i < doc.length; i += size) {
      const r = stream.push(doc.slice(i, i + size));
      done.push(...r.done);
      open = r.open;
      assert.deepEqual([...done, ...open], parse(doc.slice(0, i + size)), `after ${i + size} chars in chunks of ${size}`);
    }
    assert.deepEqual([...done, ...open], whole);
    assert.ok(done.length > 10, `only ${done.length} blocks final`);
  }
  // A long answer keeps only its unfinished end to parse again.
  const stream = new MarkdownStream();
  for (let i = 0; i < 1000; i++) stream.push(`Paragraph ${i} with **bold**.\n\n`);
  assert.ok(stream.tail.length < 100, `tail of ${stream.tail.length} chars`);
});

// Answers that stream in as one long paragraph of hostile inline text (code-heavy prose is full of unclosed * _ ` [),
// and long blocks that grow line by line.
const STREAM_PATTERNS = {
  'f(*args, **kwargs)': () => 'f(*args, **kwargs) ',
  '**a _b': () => '**a _b ',
  'matched among unmatched': () => '*a **b** c* _x ',
  'unclosed brackets and links': (i) => `[a [x](y ${i} ![z `,
  'backticks of two lengths': () => 'a `b ``c ',
  'no whitespace': () => 'a*b_c~~d[e`f',
};
// Blocks that grow line by line.
const GROWING_BLOCKS = {
  list: (i) => `- item ${i} with *em* and \`code\`\n`,
  table: (i) => (i === 0 ? '| a | b |\n|---|---|\n' : `| ${i} *x* | \`y\` |\n`),
  'code fence': (i) => (i === 0 ? '```js\n' : `const x${i} = f(*args);\n`),
  'quoted paragraph': (i) => `> quoted ${i} *line*\n`,
  'lines of one paragraph': (i) => `line ${i} with *em\n`,
};

// Characters the parser reads per 120-byte chunk once `size` characters of `gen` have streamed in.
function workPerChunk(gen, size) {
  let text = '';
  for (let i = 0; text.length < size + 1200; i++) text += gen(i);
  const stream = new MarkdownStream();
  stream.push(text.slice(0, size));
  const before = parseWork.inline + parseWork.lines;
  for (let k = 0; k < 10; k++) stream.push(text.slice(size + k * 120, size + (k + 1) * 120));
  return (parseWork.inline + parseWork.lines - before) / 10;
}

test('streaming work per chunk does not grow with the answer, whatever the inline pattern or block', () => {
  for (const [name, gen] of Object.entries({ ...STREAM_PATTERNS, ...GROWING_BLOCKS })) {
    const small = workPerChunk(gen, 10_000);
    const large = workPerChunk(gen, 300_000);
    assert.ok(large <= small * 1.5 + 2000, `${name}: ${small} chars read per chunk at 10 KB, ${large} at 300 KB`);
  }
});

test('a long paragraph streamed in chunks of any size parses to the same blocks as the whole', () => {
  const body = Object.values(STREAM_PATTERNS).map((gen) => {
    let t = '';
    for (let i = 0; t.length < 5000; i++) t += gen(i);
    return t;
  });
  // One paragraph of every pattern, a paragraph of long lines with a line break, tabs and CR LF, a list, a table.
  const doc = body.join('') + '\n\n' + 'x\ty **b\r\nc** '.repeat(300) + 'w'.repeat(1500) + '  \nend\n\n'
    + '- item *a*\n'.repeat(50) + '\n| a | b |\n|---|---|\n' + '| `1` | **2** |\n'.repeat(50) + '\n'
    + '```js\n' + '\tconst x = f(*args); // ``` not a fence\n'.repeat(60) + '```\n'
    + '> quoted *a* with a long line '.repeat(60) + '\nlazy **b**\n>\n> - item\n>   more\n>\n> > inner\n> ```\n>\tcode\n'
    + '>\n' + '> | h | k |\n> |---|---|\n' + '> | 1 | 2 |\n'.repeat(20) + '>\n> ' + 'x_y '.repeat(700) + '\n\n'
    + '> first\n> second *x*\nlazy **c** line\nmore lazy\n> > nested\n> > more\n> lazy2 *y*\n> > deeper\nlazy3\n\n'
    + '1. one\n   - nested *a*\n\n'.repeat(20) + '~~~\nopen fence\r\n' + 'code\r\n'.repeat(30) + '~~~\n'
    + 'last *x';
  const whole = parse(doc);
  for (const size of [7, 97, 1000, 4099]) {
    const stream = new MarkdownStream();
    const done = [];
    let open = [];
    for (let i = 0; i < doc.length; i += size) {
      const r = stream.push(doc.slice(i, i + size));
      done.push(...r.done);
      open = r.open;
      if (size > 97 || i % (size * 5) === 0 || i + size >= doc.length) {
        assert.deepEqual([...done, ...open], parse(doc.slice(0, i + size)), `after ${i + size} chars in chunks of ${size}`);
      }
    }
    assert.deepEqual([...done, ...open], whole, `chunks of ${size}`);
  }
});

test('a long text parsed in segments gives the nodes of the text parsed whole', () => {
  const tokens = ['*', '**', '_', '__', '`', '``', '~~', '[', '](https://x.example/)', '![', '<https://q.example/>',
    'https://r.example/a_b', '\\*', '  \n', '\n', '(', ')', '*a*', '**b**',
    ...'a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T'.split(' ').map((w) => `${w}${w} `)];
  let seed = 7;
  const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  let forcedRounds = 0;
  for (let round = 0; round < 6; round++) {
    let text = '';
    while (text.length < 40_000) text += tokens[rand(tokens.length)];
    const forced = parseWork.forced;
    const nodes = parseInline(text);
    // Where every place to cut is spanned (here by long runs of nested ~~), a cut is forced and may differ.
    if (parseWork.forced === forced) assert.deepEqual(nodes, parseInlineWhole(text), `round ${round}`);
    else forcedRounds++;
  }
  assert.ok(forcedRounds <= 1, `${forcedRounds} of 6 texts had a forced cut`);
});

test('emphasis, code and links span up to 1 KB anywhere in a long paragraph; longer ones stay literal', () => {
  const filler = 'f(*args) and `x` '.repeat(400);
  const span = 'word '.repeat(190).trim();
  for (let shift = 0; shift < 3000; shift += 250) {
    const nodes = parseInline(filler.slice(0, shift) + ` **${span}** and [${span}](https://x.example/) \`${span}\` z`);
    const types = nodes.map((n) => n.type).filter((t) => t !== 'text' && t !== 'code');
    assert.deepEqual(types, ['strong', 'link'], `at ${shift}`);
    assert.equal(nodes.filter((n) => n.type === 'code').at(-1).text, span);
  }
  const long = 'word '.repeat(250).trim();
  assert.deepEqual(parseInline(`**${long}**`), [{ type: 'text', text: `**${long}**` }]);
});

// --- the ANSI terminal (ansi.js, term.js) ---------------------------------------------------------------------------

/** A buffer's lines as text, each styled run in brackets with its classes: "[ansi-fg-1|red] plain". */
function termLines(buf) {
  return buf.lines.map((_, i) => buf.runs(i).map((r) => {
    const c = styleClasses(r.style);
    const extra = [r.style.fg, r.style.bg].filter((x) => x !== null && !(typeof x === 'number' && x < 16)).map((x) => cssColor(x));
    return c.length || extra.length ? `[${[...c, ...extra].join(' ')}|${r.text}]` : r.text;
  }).join(''));
}

function term(...chunks) {
  const b = new TermBuffer();
  for (const c of chunks) b.write(c);
  return b;
}

test('ansi: SGR colours (16, 256, truecolor), bold, reset', () => {
  assert.deepEqual(termLines(term('\x1b[31mred\x1b[0m plain \x1b[1;32mbold green\x1b[m.')),
    ['[ansi-fg-1|red] plain [ansi-fg-2 ansi-bold|bold green].']);
  assert.deepEqual(termLines(term('\x1b[91;44mhi\x1b[39mX\x1b[49mY')), ['[ansi-fg-9 ansi-bg-4|hi][ansi-bg-4|X]Y']);
  assert.deepEqual(termLines(term('\x1b[38;5;196ma\x1b[48;5;21mb\x1b[38;5;244mc\x1b[0m')),
    ['[rgb(255, 0, 0)|a][rgb(255, 0, 0) rgb(0, 0, 255)|b][rgb(128, 128, 128) rgb(0, 0, 255)|c]']);
  assert.deepEqual(termLines(term('\x1b[38;2;1;2;3mt\x1b[48:2::10:20:30mu\x1b[38:5:3mv')),
    ['[rgb(1, 2, 3)|t][rgb(1, 2, 3) rgb(10, 20, 30)|u][ansi-fg-3 rgb(10, 20, 30)|v]']);
  assert.deepEqual(termLines(term('\x1b[38;5;9mlow\x1b[0m')), ['[ansi-fg-9|low]'], '256-colour 0–15 use the palette');
  assert.deepEqual(termLines(term('\x1b[3;4;9mx\x1b[23;24;29my\x1b[2mz\x1b[22mw')),
    ['[ansi-italic ansi-underline ansi-strike|x]y[ansi-dim|z]w']);
  assert.deepEqual(termLines(term('\x1b[7minv\x1b[27m \x1b[31;7mr')), ['[ansi-fg-inv ansi-bg-inv|inv] [ansi-fg-inv ansi-bg-1|r]']);
  // Malformed colours are ignored, the rest of the sequence too (as xterm does), and nothing leaks as text.
  assert.deepEqual(termLines(term('\x1b[38;5;300ma\x1b[38;2;1;2mb\x1b[1;38mc')), ['ab[ansi-bold|c]']);
});

test('ansi: cursor movement, clears, titles and other escapes are neutralised', () => {
  const b = term('a\x1b[2J\x1b[H\x1b[10;10Hb\x1b[3Ac\x1b[?25l\x1b[?1049hd\x1b]0;evil title\x07e\x1b]2;t2\x1b\\f',
    '\x1bPdcs\x1b\\g\x1b_apc\x1b\\h\x1b(Bi\x1b7\x1b8j\x1bck\x9b31ml\x9d0;c1 title\x9cm\x07\x00\x7fn');
  assert.deepEqual(termLines(b), ['abcdefghijk[ansi-fg-1|lmn]']);
  assert.equal(b.text().includes('title'), false);
  // A sequence split across writes is completed by the next one.
  assert.deepEqual(termLines(term('x\x1b', '[3', '1my\x1b]0;ti', 'tle\x07z')), ['x[ansi-fg-1|yz]']);
  // An overlong parameter string is consumed and ignored.
  assert.deepEqual(termLines(term('p\x1b[' + '1;'.repeat(100) + '31mq')), ['pq']);
});

test('ansi: \\r progress lines, erase in line, backspace, tabs, CRLF', () => {
  assert.deepEqual(termLines(term('10%\r20%\r100%\ndone\n')), ['100%', 'done', '']);
  assert.deepEqual(termLines(term('downloading 1234\r\x1b[Kok\r\n')), ['ok', '']);
  assert.deepEqual(termLines(term('long line\rab')), ['abng line']);
  assert.deepEqual(termLines(term('abc\bX\tY')), ['abX     Y']);
  assert.deepEqual(termLines(term('one\r\ntwo')), ['one', 'two']);
  assert.equal(term('one\r\ntwo\n').text(), 'one\ntwo');
});

test('ansi: scroll-back and line length are bounded', () => {
  const b = new TermBuffer({ maxLines: 100, maxCols: 50 });
  for (let i = 0; i < 1000; i++) b.write(`line ${i}\n`);
  assert.equal(b.lines.length, 100);
  assert.equal(b.dropped, 901);
  assert.equal(b.lineText(0), 'line 901');
  assert.equal(b.lineText(98), 'line 999');
  b.write('x'.repeat(10000));
  assert.equal(b.lineText(99).length, 50);
  assert.equal(b.lines[99].cut, true);
  const big = new TermBuffer();
  big.write('y\n'.repeat(5000));
  assert.equal(big.lines.length, 2000, 'the default keeps the last 2 000 lines');
});

// A DOM just big enough for renderLine: it records what was created, so a test sees that text stays text.
function fakeDoc() {
  const made = [];
  const node = (name) => ({
    nodeName: name, children: [], className: '', props: {},
    style: { setProperty(k, v) { this.owner.props[k] = v; } },
    appendChild(c) { this.children.push(c); return c; },
    get textContent() { return this.children.map((c) => c.textContent).join(''); },
  });
  return {
    made,
    createElement(name) { const n = node(name.toUpperCase()); n.style.owner = n; made.push(n.nodeName); return n; },
    createTextNode(text) { return { nodeName: '#text', textContent: text }; },
  };
}

test('term: output is rendered as text nodes; markup in it never becomes HTML', () => {
  const doc = fakeDoc();
  const b = term('<script>alert(1)</script> \x1b[31m<img src=x onerror=alert(2)>\x1b[38;2;9;8;7m&amp;\x1b[0m');
  const line = renderLine(doc, b, 0);
  assert.equal(line.textContent, '<script>alert(1)</script> <img src=x onerror=alert(2)>&amp;');
  assert.deepEqual(doc.made, ['DIV', 'SPAN', 'SPAN'], 'only the line and its styled spans are elements');
  assert.equal(line.children[0].nodeName, '#text');
  assert.equal(line.children[1].className, 'ansi-fg-1');
  assert.deepEqual(line.children[2].props, { color: 'rgb(9, 8, 7)' });
});

test('term: a snapshot\'s terminals fill their panes (output tail, truncated, exit); malformed items are left out', () => {
  const got = snapshotTerminals({
    seq: 9, entries: [],
    terminals: [
      { terminalId: 'term_a', output: 'hello\n', exitStatus: { exitCode: 0, signal: null } },
      { terminalId: 'term_b', output: 'tail', truncated: true, exitStatus: { exitCode: null, signal: 'SIGKILL' } },
      { terminalId: 'term_c', output: 'running' },
      { terminalId: '', output: 'x' }, null, 'junk', { output: 'no id' },
      { terminalId: 'term_d', output: 42, exitStatus: 'bad' },
    ],
  });
  assert.deepEqual(got, [
    { id: 'term_a', output: 'hello\n', truncated: false, exit: { exitCode: 0, signal: null } },
    { id: 'term_b', output: 'tail', truncated: true, exit: { exitCode: null, signal: 'SIGKILL' } },
    { id: 'term_c', output: 'running', truncated: false, exit: null },
    { id: 'term_d', output: '', truncated: false, exit: null },
  ]);
  assert.deepEqual(snapshotTerminals({ entries: [] }), []);
  assert.deepEqual(snapshotTerminals(null), []);
});

// --- attachments (attach.js) ----------------------------------------------------------------------------------------

test('attachments: images and text files become ACP blocks, within the limits and the agent\'s capabilities', async () => {
  const all = attachCaps({ promptCapabilities: { image: true, embeddedContext: true } });
  assert.deepEqual(all, { image: true, file: true });
  assert.deepEqual(attachCaps({ promptCapabilities: { image: true } }), { image: true, file: false });
  assert.deepEqual(attachCaps(undefined), { image: false, file: false });

  const png = new File([Uint8Array.from([137, 80, 78, 71, 1, 2, 3])], 'a.png', { type: 'image/png' });
  const img = await readAttachment(png, all);
  assert.deepEqual(img, { kind: 'image', name: 'a.png', size: 7, block: { type: 'image', mimeType: 'image/png', data: 'iVBORwECAw==' } });
  const txt = await readAttachment(new File(['héllo <b>'], 'my notes.txt', { type: 'text/plain' }), all);
  assert.deepEqual(txt.block, { type: 'resource', resource: { uri: 'file:///my%20notes.txt', mimeType: 'text/plain', text: 'héllo <b>' } });
  assert.equal(txt.size, 10);
  assert.equal(resourceName(txt.block.resource.uri), 'my notes.txt');
  assert.equal((await readAttachment(new File(['x'], 'Makefile'), all)).block.resource.mimeType, 'text/plain');

  const refused = async (file, caps, re) => {
    await assert.rejects(readAttachment(file, caps), (err) => err instanceof AttachError && re.test(err.message));
  };
  await refused(new File([new Uint8Array(MAX_IMAGE_BYTES + 1)], 'big.jpg', { type: 'image/jpeg' }), all, /“big\.jpg” is 512 KB; an image can be at most 512 KB\./);
  await refused(new File([new Uint8Array(MAX_TEXT_BYTES + 1)], 'big.log', { type: 'text/plain' }), all, /a text file can be at most 256 KB/);
  await refused(new File(['<svg/>'], 's.svg', { type: 'image/svg+xml' }), all, /images can be PNG, JPEG, GIF or WebP/);
  await refused(new File([Uint8Array.from([0xff, 0xfe, 0x41])], 'bad.txt', { type: 'text/plain' }), all, /not a UTF-8 text file/);
  await refused(new File(['a\0b'], 'nul.txt'), all, /not a UTF-8 text file/);
  await refused(png, { image: false, file: true }, /this agent does not accept images/);
  await refused(new File(['x'], 'n.txt'), { image: true, file: false }, /this agent accepts images only/);
  await refused(new File(['x'], 'n.txt'), { image: false, file: false }, /this agent does not accept files/);

  assert.deepEqual(promptBlocks('look', [img, txt]).map((b) => b.type), ['text', 'image', 'resource']);
  assert.deepEqual(promptBlocks('  ', [img]).map((b) => b.type), ['image'], 'an attachment needs no text');
  assert.equal(fmtBytes(1023), '1023 B');
  assert.equal(fmtBytes(600 * 1024), '600 KB');
  assert.equal(fmtBytes(3 * 1024 * 1024), '3.0 MB');
});

test('ansi: one write of many lines never holds more than twice the scroll-back', () => {
  const b = new TermBuffer({ maxLines: 10, maxCols: 50 });
  let peak = 0;
  const push = b.lines.push;
  b.lines.push = function (...items) {
    const n = push.apply(this, items);
    peak = Math.max(peak, n);
    return n;
  };
  b.write('x\n'.repeat(10000));
  assert.ok(peak <= 20, `held ${peak} lines during the write`);
  assert.equal(b.lines.length, 10);
  assert.equal(b.dropped, 9991);
  assert.equal(b.lineText(8), 'x');
  assert.equal(b.takeDirty(), 9991, 'the first line kept is dirty');
});

test('status: detached has its own badge and tooltip, and still takes a prompt', () => {
  const d = statusView('detached', false);
  assert.equal(d.key, 'detached');
  assert.equal(d.label, 'detached');
  assert.equal(d.title, 'agent stopped; your next prompt restarts it');
  assert.equal(acceptsPrompt('detached'), true);
  assert.notEqual(statusView('idle', false).key, d.key);
  assert.equal(statusView('detached', true).key, 'running'); // the re-attaching prompt's turn shows as running
  assert.equal(statusView(undefined, false).key, 'starting');
  for (const s of ['closed', 'failed']) assert.equal(acceptsPrompt(s), false);
  for (const s of ['idle', 'starting', 'running']) assert.equal(acceptsPrompt(s), true);
});

test('status: a 409 session_not_resumable is explained, other refusals keep their code', () => {
  const nr = promptErrorText({ status: 409, code: 'session_not_resumable', message: 'agent cannot load' });
  assert.match(nr, /cannot be restarted/);
  assert.match(nr, /start a new session/);
  assert.equal(promptErrorText({ status: 413, code: 'prompt_too_large', message: 'too big' }), 'Could not send the prompt: too big (prompt_too_large)');
});

// --- who did what (people.js) ----------------------------------------------------------------------------------------

const OPTIONS = [
  { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'reject-once', name: 'Reject', kind: 'reject_once' },
];
const ann = { principal: 'ann', name: 'ann' };
const bob = { principal: 'bob', name: 'Bob B.' };
const selected = (optionId, allowed) => ({ outcome: 'selected', optionId, allowed });

test('people: the resolved permission card names who answered, else how it was resolved', () => {
  const v = (params, meId = '') => permissionVerdict(params, OPTIONS, meId).text;
  assert.equal(v({ outcome: selected('allow-once', true), by: 'rest', actor: ann }), 'Allowed by ann · Allow once');
  assert.equal(v({ outcome: selected('reject-once', false), by: 'client', actor: bob }), 'Rejected by Bob B. · Reject');
  assert.equal(v({ outcome: selected('allow-once', true), by: 'rest', actor: ann }, 'ann'), 'Allowed by ann (you) · Allow once');
  assert.equal(v({ outcome: selected('allow-once', true), by: 'acp', actor: { principal: 'oidc:42' } }), 'Allowed by oidc:42 · Allow once');
  // The policy's answer is recorded as the owner's, who chose the policy: say so, not that they clicked.
  assert.equal(v({ outcome: selected('allow-once', true), by: 'policy', actor: ann }), 'Allowed by ann’s policy · Allow once');
  // Without a named principal: how it came, the `by` value as the last resort.
  assert.equal(v({ outcome: selected('allow-once', true), by: 'policy' }), 'Allowed by the session policy · Allow once');
  assert.equal(v({ outcome: selected('allow-once', true), by: 'rest' }), 'Allowed via the API · Allow once');
  // Without an actor the frame names nobody: the page that answered says what any other page (or a reload) says.
  assert.equal(v({ outcome: selected('allow-once', true), by: 'rest' }, 'ann'), 'Allowed via the API · Allow once');
  assert.equal(v({ outcome: selected('reject-once', false), by: 'somewhere-new' }), 'Rejected by somewhere-new · Reject');
  assert.equal(v({ outcome: { outcome: 'cancelled', allowed: false }, by: 'deadline' }), 'Timed out, denied');
  assert.equal(v({ outcome: { outcome: 'cancelled', allowed: false }, by: 'cancel' }), 'Cancelled with the turn');
  assert.equal(v({ outcome: { outcome: 'cancelled', allowed: false }, by: 'client', actor: bob }), 'Cancelled by Bob B.');
  // A gateway without authentication names everybody `anonymous`: that says nothing, so it is not shown.
  assert.equal(v({ outcome: selected('allow-once', true), by: 'client', actor: { principal: 'anonymous', name: 'anonymous' } }), 'Allowed in a client · Allow once');
  // An option the page does not know (a snapshot) still says allowed or rejected from outcome.allowed.
  const unknown = permissionVerdict({ outcome: selected('zz', true), by: 'rest', actor: ann }, []);
  assert.deepEqual(unknown, { text: 'Allowed by ann · zz', allowed: true, who: 'by ann', name: 'ann', choice: 'zz' });
  assert.equal(permissionVerdict({ outcome: selected('reject-once', false), by: 'rest' }, OPTIONS).allowed, false);
  assert.equal(permissionVerdict(null).text, 'Cancelled');
});

test('people: actor names', () => {
  assert.equal(actorName(ann), 'ann');
  assert.equal(actorName({ principal: 'oidc:7', name: '  ' }), 'oidc:7');
  assert.equal(actorName({ principal: 'anonymous', name: 'anonymous' }), '');
  assert.equal(actorName(null), '');
  assert.equal(actorName({ principal: 'x', name: 'y'.repeat(500) }).length, 128);
});

// --- sharing (sharing.js) --------------------------------------------------------------------------------------------

test('sharing: offered for a listing with an owner, hidden on errors and without authentication', () => {
  const listing = { owner: ann, shares: [{ principal: 'bob', role: 'viewer' }, { principal: 'carl', role: 'collaborator' }] };
  assert.equal(sharingOffered(listing), true);
  assert.equal(sharingOffered({ owner: { principal: '', name: '' }, shares: [] }), true, 'admins share sessions nobody owns');
  assert.equal(sharingOffered({ owner: { principal: 'anonymous', name: 'anonymous' }, shares: [] }), false);
  assert.equal(sharingOffered(null), false);
  assert.equal(sharingOffered({ code: 'forbidden' }), false);
  // With the caller known (GET /v1/me): the owner and admins only.
  assert.equal(sharingOffered(listing, { id: 'ann', role: 'user' }), true);
  assert.equal(sharingOffered(listing, { id: 'bob', role: 'user' }), false);
  assert.equal(sharingOffered(listing, { id: 'root', role: 'admin' }), true);
  assert.deepEqual(shareRows(listing), [
    { principal: 'ann', name: 'ann', role: 'owner' },
    { principal: 'bob', name: 'bob', role: 'viewer' },
    { principal: 'carl', name: 'carl', role: 'collaborator' },
  ]);
  assert.deepEqual(shareRows({ owner: { principal: '' }, shares: [null, { principal: '' }, { principal: 'd', role: 'viewer' }] }),
    [{ principal: 'd', name: 'd', role: 'viewer' }]);
});

test('sharing: principal ids and problem+json errors are said clearly', () => {
  assert.equal(principalIdProblem('bob'), '');
  assert.equal(principalIdProblem('oidc:abc-123'), '');
  assert.match(principalIdProblem('  '), /Enter the principal id/);
  assert.match(principalIdProblem('a b'), /no spaces or slashes/);
  assert.match(principalIdProblem('a/b'), /no spaces or slashes/);
  assert.match(principalIdProblem('é'.repeat(129)), /at most 256 bytes/);
  const forbidden = { status: 403, code: 'forbidden', message: 'not allowed on this session' };
  assert.equal(shareErrorText(forbidden), 'Only the session’s owner or an admin can change who it is shared with. (not allowed on this session; forbidden)');
  assert.equal(shareErrorText({ status: 404, code: 'session_not_found', message: 'session not found' }, 'list'),
    'This session no longer exists, or is no longer shared with you. (session not found; session_not_found)');
  assert.match(shareErrorText({ status: 400, code: 'bad_request', message: 'role "x": want viewer or collaborator' }), /refused this share\. \(role "x"/);
  assert.equal(shareErrorText({ status: 0, code: 'network' }, 'unshare'), 'The gateway could not be reached.');
  assert.equal(shareErrorText({ status: 500, code: 'internal', message: '' }, 'unshare'), 'Could not remove the share. (internal)');
  assert.equal(isForbidden(forbidden), true);
  assert.equal(isForbidden({ status: 403, code: 'forbidden_origin' }), false, 'a foreign origin is not a role');
  assert.match(VIEWER_NOTICE, /shared with you as viewer/);
});

test('presence: watcher rows from the detail or _gateway/presence, anonymous and malformed entries left out', () => {
  assert.deepEqual(watcherRows([
    { principal: 'ann', name: 'Ann Lee', role: 'owner', faces: 1 },
    { principal: 'oidc:x', name: '', role: 'collaborator', faces: 2 },
    { principal: 'anonymous', name: 'anonymous', role: 'admin', faces: 1 },
    { name: 'no id' }, null, 'x',
    { principal: 'eve', name: 'eve', role: 'root?', faces: 0 },
  ]), [
    { principal: 'ann', name: 'Ann Lee', role: 'owner', faces: 1, initials: 'AL' },
    { principal: 'oidc:x', name: 'oidc:x', role: 'collaborator', faces: 2, initials: 'O' },
    { principal: 'eve', name: 'eve', role: 'viewer', faces: 1, initials: 'E' },
  ]);
  assert.deepEqual(watcherRows(undefined), []);
  assert.equal(initials('bob'), 'B');
  assert.equal(initials('  '), '?');
});
