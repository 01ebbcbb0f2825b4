// Benchmark of the UI's Markdown renderer while an answer streams: the parse work per chunk (what the transcript
// does on each animation frame) at 10 KB, 100 KB and 1 MB of answer, for prose, for hostile inline patterns (each
// one paragraph as long as the answer) and for blocks that grow line by line.
// Not a test: run `node e2e/markdown.bench.mjs [path/to/markdown.js [pattern-regexp]]` (default: the UI's module). A module without
// `MarkdownStream` is measured the way the old UI used it: the whole message parsed on every chunk.
// Each case runs in a worker with a time budget; a case over budget prints ">budget".

import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL, fileURLToPath } from 'node:url';
import path from 'node:path';

const CHUNK = 120; // bytes per streamed chunk, about what agents send
const MEASURED = 20; // chunks timed per case
const BUDGET_MS = 60_000;

const PATTERNS = {
  prose: (i) => `Paragraph ${i} with *emphasis*, **strong**, \`code\` and a [link](https://example.com/${i}).\n\n`
    + `- item ${i}\n- another _item_\n\n\`\`\`js\nconst x${i} = f(${i});\n\`\`\`\n\n`,
  'f(*args, **kwargs)': () => 'f(*args, **kwargs) ',
  '**a _b': () => '**a _b ',
  '*a **b** c* _x': () => '*a **b** c* _x ',
  '[a [x](y ![z': (i) => `[a [x](y ${i} ![z `,
  'a `b ``c': () => 'a `b ``c ',
  '<a <https://x': (i) => `<a <https://x.example/${i} `,
  'no whitespace': () => 'a*b_c~~d[e`f(',
  'a | b (one line)': () => 'a | b ',
  'lines of one para': (i) => `line ${i} with *em\n`,
  'list growing': (i) => `- item ${i} with *em* and \`code\`\n`,
  'nested list': (i) => `- item ${i}\n  - sub *a*\n`,
  'table growing': (i) => (i === 0 ? '| a | b |\n|---|---|\n' : `| ${i} *x* | \`y\` |\n`),
  'fence growing': (i) => (i === 0 ? '```js\n' : `const x${i} = f(*args);\n`),
  'quote growing': (i) => `> quoted ${i} *line*\n`,
};

function build(pattern, size) {
  const gen = PATTERNS[pattern];
  let s = '';
  for (let i = 0; s.length < size; i++) s += gen(i);
  return s;
}

async function runCase({ modulePath, pattern, size }) {
  const md = await import(pathToFileURL(modulePath).href);
  const full = build(pattern, size + CHUNK * (MEASURED + 1));
  let text = full.slice(0, size);
  let render;
  if (md.MarkdownStream) {
    const stream = new md.MarkdownStream();
    let fed = 0;
    render = (t) => { stream.push(t.slice(fed)); fed = t.length; };
    render(text);
  } else {
    md.parse(text);
    render = (t) => md.parse(t);
  }
  const times = [];
  for (let k = 0; k <= MEASURED; k++) {
    text = full.slice(0, size + CHUNK * (k + 1));
    const t0 = performance.now();
    render(text);
    if (k > 0) times.push(performance.now() - t0); // the first chunk warms up
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

function runInWorker(job) {
  return new Promise((resolve) => {
    const w = new Worker(fileURLToPath(import.meta.url), { workerData: job });
    const timer = setTimeout(() => { w.terminate(); resolve(null); }, BUDGET_MS);
    w.once('message', (ms) => { clearTimeout(timer); w.terminate(); resolve(ms); });
    w.once('error', (err) => { clearTimeout(timer); console.error(err); resolve(null); });
  });
}

if (!isMainThread) {
  parentPort.postMessage(await runCase(workerData));
} else {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const modulePath = path.resolve(process.argv[2] || path.join(here, '../web/static/js/markdown.js'));
  const sizes = [10_000, 100_000, 1_000_000];
  console.log(`module ${modulePath}`);
  console.log(`median ms per ${CHUNK}-byte chunk (${MEASURED} chunks) at each answer size`);
  const only = process.argv[3] ? new RegExp(process.argv[3]) : null; // a pattern name filter
  console.log(['pattern'.padEnd(20), ...sizes.map((s) => `${s / 1000} KB`.padStart(10))].join(''));
  for (const pattern of Object.keys(PATTERNS)) {
    if (only && !only.test(pattern)) continue;
    const cells = [];
    for (const size of sizes) {
      const ms = await runInWorker({ modulePath, pattern, size });
      cells.push((ms === null ? `>${BUDGET_MS / 1000}s` : ms.toFixed(2)).padStart(10));
    }
    console.log(pattern.padEnd(20) + cells.join(''));
  }
}
