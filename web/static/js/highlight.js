// A small syntax highlighter: a tokenizer per language family (pure, testable in node) and a DOM filler that builds
// <span class="tok-…"> nodes with textContent. Token types: kw, str, num, com, fn, type, lit, op, plain.

const words = (s) => new Set(s.split(/\s+/).filter(Boolean));

const C_LIKE_OPS = /^(?:[-+*/%=!<>&|^~?:]+|[()[\]{}.,;])/;

const LANGS = {
  go: {
    line: ['//'], block: [['/*', '*/']], strings: ['"', "'", '`'], raw: ['`'],
    kw: words('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var'),
    type: words('bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable'),
    lit: words('true false nil iota'),
    builtin: words('append cap clear close complex copy delete imag len make max min new panic print println real recover'),
  },
  js: {
    line: ['//'], block: [['/*', '*/']], strings: ['"', "'", '`'], raw: [],
    kw: words('async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield as type interface enum implements private protected public readonly declare namespace abstract keyof satisfies'),
    type: words('string number boolean unknown never any object symbol bigint void Array Promise Map Set Record Partial Error'),
    lit: words('true false null undefined NaN Infinity'),
    builtin: words('console JSON Math Object window document require module'),
  },
  json: {
    line: [], block: [], strings: ['"'], raw: [],
    kw: words(''), type: words(''), lit: words('true false null'), builtin: words(''), keysAsType: true,
  },
  python: {
    line: ['#'], block: [], strings: ['"""', "'''", '"', "'"], raw: [],
    kw: words('and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case'),
    type: words('int float str bytes bool list dict set tuple object type Exception'),
    lit: words('True False None self cls'),
    builtin: words('print len range open isinstance enumerate zip map filter sorted super'),
  },
  sh: {
    line: ['#'], block: [], strings: ['"', "'"], raw: ["'"],
    kw: words('if then else elif fi for while until do done case esac in function return local export set unset shift exit'),
    type: words(''), lit: words('true false'),
    builtin: words('echo cd ls cat grep sed awk printf read test mkdir rm cp mv curl go npm node git make'),
    vars: true,
  },
  rust: {
    line: ['//'], block: [['/*', '*/']], strings: ['"'], raw: [],
    kw: words('as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while'),
    type: words('i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result Box'),
    lit: words('true false None Some Ok Err'), builtin: words('println print format vec panic'),
  },
  c: {
    line: ['//'], block: [['/*', '*/']], strings: ['"', "'"], raw: [],
    kw: words('auto break case catch class const continue default delete do else enum extern final for friend goto if import inline new namespace override package private protected public register return sizeof static struct switch template this throw throws try typedef union using virtual void volatile while extends implements interface'),
    type: words('int char short long float double bool unsigned signed size_t String Object boolean byte'),
    lit: words('true false NULL nullptr null'), builtin: words('printf malloc free System'),
  },
  yaml: {
    line: ['#'], block: [], strings: ['"', "'"], raw: [],
    kw: words(''), type: words(''), lit: words('true false null yes no on off'), builtin: words(''), yamlKeys: true,
  },
};

const ALIASES = {
  golang: 'go', javascript: 'js', mjs: 'js', cjs: 'js', jsx: 'js', ts: 'js', tsx: 'js', typescript: 'js',
  py: 'python', python3: 'python', bash: 'sh', shell: 'sh', zsh: 'sh', console: 'sh', shellscript: 'sh',
  rs: 'rust', cpp: 'c', 'c++': 'c', h: 'c', hpp: 'c', java: 'c', cs: 'c', csharp: 'c', kotlin: 'c', swift: 'c',
  yml: 'yaml', jsonc: 'json', json5: 'json',
};

/** Returns the language key used for `lang`, or '' when it is not highlighted. */
export function languageOf(lang) {
  const l = String(lang || '').toLowerCase();
  if (l === 'diff' || l === 'patch') return 'diff';
  if (LANGS[l]) return l;
  return ALIASES[l] || '';
}

/** Splits `code` into tokens [{type, text}] for the language `lang`. Unknown languages give one plain token. */
export function tokenize(code, lang) {
  const key = languageOf(lang);
  const src = String(code ?? '');
  if (key === 'diff') return tokenizeDiff(src);
  const spec = LANGS[key];
  if (!spec) return src ? [{ type: 'plain', text: src }] : [];
  const out = [];
  const push = (type, text) => {
    if (!text) return;
    const last = out[out.length - 1];
    if (last && last.type === type) last.text += text;
    else out.push({ type, text });
  };
  let i = 0;
  const n = src.length;
  while (i < n) {
    // Comments.
    let matched = false;
    for (const lc of spec.line) {
      if (src.startsWith(lc, i) && (lc !== '#' || i === 0 || /\s/.test(src[i - 1]))) {
        let e = src.indexOf('\n', i);
        if (e < 0) e = n;
        push('com', src.slice(i, e));
        i = e;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    for (const [open, close] of spec.block) {
      if (src.startsWith(open, i)) {
        let e = src.indexOf(close, i + open.length);
        e = e < 0 ? n : e + close.length;
        push('com', src.slice(i, e));
        i = e;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    // Strings.
    for (const q of spec.strings) {
      if (src.startsWith(q, i)) {
        const raw = spec.raw.includes(q) || q.length === 3;
        let k = i + q.length;
        while (k < n) {
          if (!raw && src[k] === '\\') { k += 2; continue; }
          if (src.startsWith(q, k)) { k += q.length; break; }
          if (q.length === 1 && q !== '`' && src[k] === '\n' && !raw) break;
          k++;
        }
        k = Math.min(k, n);
        let type = 'str';
        if (spec.keysAsType) {
          let m = k;
          while (m < n && /[ \t]/.test(src[m])) m++;
          if (src[m] === ':') type = 'type';
        }
        push(type, src.slice(i, k));
        i = k;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    const c = src[i];
    // Shell variables.
    if (spec.vars && c === '$') {
      const m = /^\$(?:\{[^}\n]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@#?$!*-])/.exec(src.slice(i));
      if (m) { push('type', m[0]); i += m[0].length; continue; }
    }
    // Numbers.
    if (/[0-9]/.test(c) && (i === 0 || !/[A-Za-z0-9_$]/.test(src[i - 1]))) {
      const m = /^(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)[a-zA-Z]*/.exec(src.slice(i));
      if (m && m[0]) { push('num', m[0]); i += m[0].length; continue; }
    }
    // Identifiers and keywords.
    if (/[A-Za-z_$@]/.test(c) || c > '\u007f') {
      const m = /^[A-Za-z_$@\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff-]*/.exec(src.slice(i));
      let word = m[0];
      // Only shell and yaml allow '-' inside words.
      if (!spec.vars && !spec.yamlKeys) word = word.replace(/-.*$/, '');
      if (!word) word = c;
      let type = 'plain';
      if (spec.kw.has(word)) type = 'kw';
      else if (spec.lit.has(word)) type = 'lit';
      else if (spec.type.has(word)) type = 'type';
      else if (spec.builtin.has(word)) type = 'fn';
      else if (spec.yamlKeys && /^[ \t]*:/.test(src.slice(i + word.length)) && /(^|\n)[ \t-]*$/.test(src.slice(0, i))) type = 'type';
      else if (/^[ \t]*\(/.test(src.slice(i + word.length, i + word.length + 8))) type = 'fn';
      else if (key !== 'sh' && /^[A-Z][a-z0-9]/.test(word) && key !== 'yaml') type = 'type';
      push(type, word);
      i += word.length;
      continue;
    }
    const op = C_LIKE_OPS.exec(src.slice(i));
    if (op) { push('op', op[0]); i += op[0].length; continue; }
    push('plain', c);
    i++;
  }
  return out;
}

function tokenizeDiff(src) {
  const out = [];
  for (const line of src.split(/(?<=\n)/)) {
    let type = 'plain';
    if (line.startsWith('+++') || line.startsWith('---')) type = 'com';
    else if (line.startsWith('@@')) type = 'fn';
    else if (line.startsWith('+')) type = 'ins';
    else if (line.startsWith('-')) type = 'del';
    out.push({ type, text: line });
  }
  return out;
}

/** Fills element `el` with highlighted `code` (spans with textContent only). */
export function highlightInto(el, code, lang) {
  const doc = el.ownerDocument;
  el.textContent = '';
  for (const t of tokenize(code, lang)) {
    if (t.type === 'plain') {
      el.appendChild(doc.createTextNode(t.text));
    } else {
      const s = doc.createElement('span');
      s.className = 'tok-' + t.type;
      s.textContent = t.text;
      el.appendChild(s);
    }
  }
}
