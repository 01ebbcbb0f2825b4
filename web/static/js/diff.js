// Line diff (longest common subsequence over the changed middle) and unified-diff hunks. Pure: no DOM.

const MAX_CELLS = 4_000_000; // beyond this the middle is shown as removed-then-added

function splitLines(text) {
  if (text === null || text === undefined || text === '') return [];
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Returns the edit script between two texts: [{op:' '|'-'|'+', text, oldNo?, newNo?}]. */
export function diffLines(oldText, newText) {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const ops = [];
  for (let k = 0; k < pre; k++) ops.push({ op: ' ', text: a[k] });
  if (am.length * bm.length > MAX_CELLS) {
    for (const t of am) ops.push({ op: '-', text: t });
    for (const t of bm) ops.push({ op: '+', text: t });
  } else {
    const n = am.length;
    const m = bm.length;
    // lcs[i][j] = LCS length of am[i:] and bm[j:], in one flat typed array.
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = am[i] === bm[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) { ops.push({ op: ' ', text: am[i] }); i++; j++; }
      else if (j >= m || (i < n && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) { ops.push({ op: '-', text: am[i] }); i++; }
      else { ops.push({ op: '+', text: bm[j] }); j++; }
    }
  }
  for (let k = a.length - suf; k < a.length; k++) ops.push({ op: ' ', text: a[k] });
  let oldNo = 1;
  let newNo = 1;
  for (const o of ops) {
    if (o.op !== '+') o.oldNo = oldNo++;
    if (o.op !== '-') o.newNo = newNo++;
  }
  return ops;
}

/**
 * Groups an edit script into unified-diff hunks with `context` lines around changes.
 * Returns {hunks:[{oldStart, oldLines, newStart, newLines, header, lines}], added, removed}.
 */
export function unifiedDiff(oldText, newText, context = 3) {
  const ops = diffLines(oldText, newText);
  let added = 0;
  let removed = 0;
  const changed = [];
  ops.forEach((o, k) => {
    if (o.op === '+') added++;
    if (o.op === '-') removed++;
    if (o.op !== ' ') changed.push(k);
  });
  const hunks = [];
  let k = 0;
  while (k < changed.length) {
    let start = Math.max(0, changed[k] - context);
    let end = Math.min(ops.length, changed[k] + context + 1);
    k++;
    while (k < changed.length && changed[k] - context <= end) {
      end = Math.min(ops.length, changed[k] + context + 1);
      k++;
    }
    const lines = ops.slice(start, end);
    const oldLines = lines.filter((o) => o.op !== '+').length;
    const newLines = lines.filter((o) => o.op !== '-').length;
    const firstOld = lines.find((o) => o.oldNo !== undefined);
    const firstNew = lines.find((o) => o.newNo !== undefined);
    const oldStart = oldLines ? firstOld.oldNo : (firstNew ? Math.max(0, firstNew.newNo - 1) : 0);
    const newStart = newLines ? firstNew.newNo : 0;
    const fmt = (s, c) => (c === 1 ? String(s) : `${s},${c}`);
    hunks.push({
      oldStart, oldLines, newStart, newLines, lines,
      header: `@@ -${fmt(oldLines ? oldStart : 0, oldLines)} +${fmt(newStart, newLines)} @@`,
    });
    start = end;
  }
  return { hunks, added, removed };
}

/** Formats a unified diff as text (for copying and tests). */
export function formatUnified(path, oldText, newText, context = 3) {
  const { hunks } = unifiedDiff(oldText, newText, context);
  const out = [`--- ${oldText === null || oldText === undefined ? '/dev/null' : 'a/' + path}`, `+++ b/${path}`];
  for (const h of hunks) {
    out.push(h.header);
    for (const l of h.lines) out.push(l.op + l.text);
  }
  return out.join('\n');
}
