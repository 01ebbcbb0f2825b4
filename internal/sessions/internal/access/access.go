// Package access decides what a principal may do with a session: its owner, admins and the principals the
// owner shared it with (Shares, with its own lock). It holds no other session state.
package access

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
)

// Access is what a principal may do with a session, in increasing order.
type Access int

// Access levels.
const (
	None Access = iota // the session does not exist for them
	View               // a viewer: detail and streams
	Act                // a collaborator: prompt, cancel, answer permissions
	Own                // the owner or an admin: everything, shares and close included
)

// Of is what p may do with a session owned by owner and shared as shares say.
func Of(owner string, shares *Shares, p principal.Principal) Access {
	switch {
	case p.IsAdmin():
		return Own
	case p.IsZero():
		return None
	case owner == p.ID:
		return Own
	}
	switch shares.Role(p.ID) {
	case store.ShareCollaborator:
		return Act
	case store.ShareViewer:
		return View
	}
	return None
}

// ParseShareRole accepts "viewer" and "collaborator".
func ParseShareRole(v string) (store.ShareRole, error) {
	switch store.ShareRole(v) {
	case store.ShareViewer, store.ShareCollaborator:
		return store.ShareRole(v), nil
	}
	return "", fmt.Errorf("%w: role %q: want viewer or collaborator", sessionerr.ErrBadRequest, v)
}

// Shares is a session's shares, with its own lock (taken alone, never with the session's).
type Shares struct {
	mu sync.Mutex
	m  map[string]store.ShareRole // Guarded by mu; by principal id.
	// rev is, on a follower, the directory revision m is as of: an older entry does not change it.
	rev uint64 // Guarded by mu.
}

// Role is id's share, "" for none.
func (sh *Shares) Role(id string) store.ShareRole {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.m[id]
}

// Set sets with's share to role; "" ends it.
func (sh *Shares) Set(with string, role store.ShareRole) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.setLocked(with, role)
}

func (sh *Shares) setLocked(with string, role store.ShareRole) {
	if role == "" {
		delete(sh.m, with)
		return
	}
	if sh.m == nil {
		sh.m = map[string]store.ShareRole{}
	}
	sh.m[with] = role
}

// List lists the shares by principal id.
func (sh *Shares) List() []store.Share {
	sh.mu.Lock()
	out := make([]store.Share, 0, len(sh.m))
	for id, role := range sh.m {
		out = append(out, store.Share{Principal: id, Role: role})
	}
	sh.mu.Unlock()
	slices.SortFunc(out, func(a, b store.Share) int { return strings.Compare(a.Principal, b.Principal) })
	return out
}

// SetRev records that the shares are those of the directory entry at rev.
func (sh *Shares) SetRev(rev uint64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.rev = rev
}

// TakeAt takes list, the shares of the directory entry at rev, unless the set holds a newer entry's; it
// reports whether the shares changed.
func (sh *Shares) TakeAt(list []store.Share, rev uint64) (changed bool) {
	m := map[string]store.ShareRole{}
	for _, s := range list {
		m[s.Principal] = s.Role
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	changed = rev >= sh.rev && !maps.Equal(m, sh.m)
	if changed {
		sh.m = m
	}
	sh.rev = max(sh.rev, rev)
	return changed
}

// SetAt sets with's share to role as the entry at rev (0 = unknown) says, unless the set holds a newer
// entry's; it reports whether it did.
func (sh *Shares) SetAt(rev uint64, with string, role store.ShareRole) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if rev > 0 && rev < sh.rev {
		return false
	}
	sh.rev = max(sh.rev, rev)
	sh.setLocked(with, role)
	return true
}
