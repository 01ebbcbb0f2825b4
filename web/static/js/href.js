// The one rule for URLs from agent text: absolute http(s) only, normalised by the URL parser.

/** Returns the normalised href when it is an absolute http(s) URL, else null. */
export function safeHref(href) {
  if (typeof href !== 'string') return null;
  const s = href.trim();
  if (!/^https?:\/\//i.test(s)) return null;
  try {
    const u = new URL(s);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return u.href;
  } catch {
    return null;
  }
}
