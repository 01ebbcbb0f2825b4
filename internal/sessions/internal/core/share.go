package core

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
)

// shareSet is a session's shares, with its own lock (taken alone, never with Session.mu).
type shareSet struct {
	mu sync.Mutex
	m  map[string]store.ShareRole // Guarded by mu; by principal id.
	// rev is, on a follower, the directory revision m is as of: an older entry does not change it.
	rev uint64 // Guarded by mu.
}

// Access is what a principal may do with a session, in increasing order.
type Access int

// Access levels.
const (
	AccessNone Access = iota // the session does not exist for them
	AccessView               // a viewer: detail and streams
	AccessAct                // a collaborator: prompt, cancel, answer permissions
	AccessOwn                // the owner or an admin: everything, shares and close included
)

// AccessOf is what p may do with s.
func (s *Session) AccessOf(p principal.Principal) Access {
	switch {
	case p.IsAdmin():
		return AccessOwn
	case p.IsZero():
		return AccessNone
	case s.Owner.ID == p.ID:
		return AccessOwn
	}
	s.shares.mu.Lock()
	role := s.shares.m[p.ID]
	s.shares.mu.Unlock()
	switch role {
	case store.ShareCollaborator:
		return AccessAct
	case store.ShareViewer:
		return AccessView
	}
	return AccessNone
}

// allow checks who may take an action needing at least need. Nobody (the gateway's own code) always may.
func (s *Session) allow(who principal.Principal, need Access) error {
	if who.IsZero() || s.AccessOf(who) >= need {
		return nil
	}
	return sessionerr.ErrForbidden
}

// ParseShareRole accepts "viewer" and "collaborator".
func ParseShareRole(v string) (store.ShareRole, error) {
	switch store.ShareRole(v) {
	case store.ShareViewer, store.ShareCollaborator:
		return store.ShareRole(v), nil
	}
	return "", fmt.Errorf("%w: role %q: want viewer or collaborator", sessionerr.ErrBadRequest, v)
}

// ShareAs shares s with the principal id as role; only the owner (or an admin) may.
func (s *Session) ShareAs(who principal.Principal, with string, role store.ShareRole) error {
	if err := s.allow(who, AccessOwn); err != nil {
		return err
	}
	if with == "" || len(with) > 256 {
		return fmt.Errorf("%w: a principal id is 1-256 bytes", sessionerr.ErrBadRequest)
	}
	return s.run.Share(who, with, role)
}

// UnshareAs ends s's share with the principal id (none is no error); only the owner (or an admin) may.
func (s *Session) UnshareAs(who principal.Principal, with string) error {
	if err := s.allow(who, AccessOwn); err != nil {
		return err
	}
	return s.run.Share(who, with, "")
}

// Shares lists who s is shared with, by principal id.
func (s *Session) Shares() []store.Share {
	s.shares.mu.Lock()
	out := make([]store.Share, 0, len(s.shares.m))
	for id, role := range s.shares.m {
		out = append(out, store.Share{Principal: id, Role: role})
	}
	s.shares.mu.Unlock()
	slices.SortFunc(out, func(a, b store.Share) int { return strings.Compare(a.Principal, b.Principal) })
	return out
}
