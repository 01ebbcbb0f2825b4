package core

import (
	"fmt"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/store"
)

// Who may do what with a session is package access's to decide; the session holds its shares there.

// AccessOf is what p may do with s.
func (s *Session) AccessOf(p principal.Principal) access.Access {
	return access.Of(s.Owner.ID, &s.shares, p)
}

// allow checks who may take an action needing at least need. Nobody (the gateway's own code) always may.
func (s *Session) allow(who principal.Principal, need access.Access) error {
	if who.IsZero() || s.AccessOf(who) >= need {
		return nil
	}
	return sessionerr.ErrForbidden
}

// ShareAs shares s with the principal id as role; only the owner (or an admin) may.
func (s *Session) ShareAs(who principal.Principal, with string, role store.ShareRole) error {
	if err := s.allow(who, access.Own); err != nil {
		return err
	}
	if with == "" || len(with) > 256 {
		return fmt.Errorf("%w: a principal id is 1-256 bytes", sessionerr.ErrBadRequest)
	}
	return s.run.Share(who, with, role)
}

// UnshareAs ends s's share with the principal id (none is no error); only the owner (or an admin) may.
func (s *Session) UnshareAs(who principal.Principal, with string) error {
	if err := s.allow(who, access.Own); err != nil {
		return err
	}
	return s.run.Share(who, with, "")
}

// Shares lists who s is shared with, by principal id.
func (s *Session) Shares() []store.Share { return s.shares.List() }
