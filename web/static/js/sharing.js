// Sharing a session (docs/security.md): the owner lists, adds and removes principals as `viewer` or
// `collaborator` through `…/shares`. What the dialog offers and says, and what a 403 on a prompt means. Pure:
// errors are duck-typed {status, code, message} (api.js's ApiError), so node tests it.

export const SHARE_ROLES = ['viewer', 'collaborator'];

export const ROLE_HINT = {
  viewer: 'watches: the transcript and its streams',
  collaborator: 'also prompts, stops turns and answers permissions',
};

/** The composer's notice once a prompt (or a stop, or an answer) was refused with 403 `forbidden`. */
export const VIEWER_NOTICE = 'This session is shared with you as viewer: you can watch it, not prompt it.';

// The caller of a gateway without authentication: there is nobody to share with.
const ANONYMOUS = 'anonymous';

/** A refusal by role: the session is visible to the caller, the action is not theirs (viewer, collaborator). */
export function isForbidden(err) {
  return !!err && err.status === 403 && err.code === 'forbidden';
}

/**
 * Whether the Share button is offered for a `GET …/shares` answer: a listing of a session with an owner who is
 * someone (without authentication everybody is `anonymous`). An error (403, 404, …) hides it.
 */
export function sharingOffered(listing, me = null) {
  if (!listing || typeof listing !== 'object' || !Array.isArray(listing.shares)) return false;
  const owner = listing.owner && typeof listing.owner === 'object' ? listing.owner.principal : '';
  if (owner === ANONYMOUS) return false;
  // Known caller (GET /v1/me): only the owner and admins manage shares; others would only be refused.
  if (me && typeof me === 'object' && typeof me.id === 'string') return me.role === 'admin' || owner === me.id;
  return true;
}

/** The owner and the shares of a listing as rows, the owner first: [{principal, name, role}]. */
export function shareRows(listing) {
  const rows = [];
  const owner = listing && listing.owner;
  if (owner && typeof owner.principal === 'string' && owner.principal) {
    rows.push({ principal: owner.principal, name: owner.name || owner.principal, role: 'owner' });
  }
  for (const s of (listing && Array.isArray(listing.shares) ? listing.shares : [])) {
    if (!s || typeof s.principal !== 'string' || !s.principal) continue;
    rows.push({ principal: s.principal, name: s.principal, role: SHARE_ROLES.includes(s.role) ? s.role : String(s.role || '') });
  }
  return rows;
}

/** Why a principal id cannot be shared with ('' when it can): the gateway takes 1–256 bytes. */
export function principalIdProblem(id) {
  const s = typeof id === 'string' ? id.trim() : '';
  if (!s) return 'Enter the principal id to share with (a users-file name, or oidc:<subject>).';
  if (new TextEncoder().encode(s).length > 256) return 'A principal id is at most 256 bytes.';
  if (/[\s/]/.test(s)) return 'A principal id has no spaces or slashes.';
  return '';
}

/**
 * What the dialog says about a failed share request (action: 'list', 'share', 'unshare'), from the problem's
 * status and code; the gateway's own detail and code follow the explanation.
 */
export function shareErrorText(err, action = 'share') {
  const status = err && typeof err.status === 'number' ? err.status : 0;
  const code = (err && err.code) || '';
  const detail = (err && err.message) || '';
  const tail = detail ? ` (${detail}${code ? `; ${code}` : ''})` : code ? ` (${code})` : '';
  if (status === 403 && code === 'forbidden') {
    return 'Only the session’s owner or an admin can change who it is shared with.' + tail;
  }
  if (status === 404) return 'This session no longer exists, or is no longer shared with you.' + tail;
  if (status === 400) return (action === 'share' ? 'The gateway refused this share.' : 'The gateway refused the request.') + tail;
  if (status === 0) return 'The gateway could not be reached.';
  const what = action === 'list' ? 'list the shares' : action === 'unshare' ? 'remove the share' : 'share the session';
  return `Could not ${what}.` + tail;
}
