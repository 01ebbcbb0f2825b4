package core

import (
	"fmt"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/store"
)

// Who may do what with a session is package access's to decide; the session holds its shares there.

// Access is what a principal may do with a session, in increasing order.
type Access = access.Access

// Access levels.
const (
	AccessNone = access.None // the session does not exist for them
	AccessView = access.View // a viewer: detail and streams
	AccessAct  = access.Act  // a collaborator: prompt, cancel, answer permissions
	AccessOwn  = access.Own  // the owner or an admin: everything, shares and close included
)

// AccessOf is what p may do with s.
func (s *Session) AccessOf(p principal.Principal) Access { return access.Of(s.Owner.ID, &s.shares, p) }

// allow checks who may take an action needing at least need. Nobody (the gateway's own code) always may.
func (s *Session) allow(who principal.Principal, need Access) error {
	if who.IsZero() || s.AccessOf(who) >= need {
		return nil
	}
	return sessionerr.ErrForbidden
}

// ParseShareRole accepts "viewer" and "collaborator".
func ParseShareRole(v string) (store.ShareRole, error) { return access.ParseShareRole(v) }

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
func (s *Session) Shares() []store.Share { return s.shares.List() }
