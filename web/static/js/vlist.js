// The window of a virtualised list: which rows to put in the DOM for a scroll position, from the heights measured
// so far and an estimate for the rest. Pure, so node tests it.

/**
 * heights: per row, its measured height (with the gap after it) or undefined; estimate: the height assumed for an
 * unmeasured row; top: the scroll offset of the viewport within the list (ignored when pinned); view: the
 * viewport's height; overscan: pixels rendered beyond each edge; pinned: the list's end is in view.
 * Returns {first, end, before, after, total}: rows [first, end) go in the DOM, before and after are the heights
 * of the rows left out above and below, total the list's height.
 */
export function listWindow(heights, estimate, top, view, overscan, pinned) {
  const n = heights.length;
  const off = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) off[i + 1] = off[i] + (heights[i] ?? estimate);
  const total = off[n];
  const from = Math.max(0, (pinned ? total - view : top) - overscan);
  const to = (pinned ? total : top + view) + overscan;
  let first = upperBound(off, from) - 1; // the row that contains `from`
  first = Math.min(Math.max(first, 0), n);
  let end = upperBound(off, to); // the first row that starts past `to`... and every row before it
  end = Math.min(Math.max(end, first), n);
  return { first, end, before: off[first], after: total - off[end], total };
}

// The first index i with off[i] > x (off is sorted).
function upperBound(off, x) {
  let lo = 0;
  let hi = off.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (off[mid] > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
