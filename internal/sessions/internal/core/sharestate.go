package core

import "github.com/acp-gateway/gateway/internal/store"

// setShare sets with's share of the session to role; "" ends it. It takes only the shares' own lock.
func (s *Session) setShare(with string, role store.ShareRole) {
	s.shares.mu.Lock()
	defer s.shares.mu.Unlock()
	if role == "" {
		delete(s.shares.m, with)
		return
	}
	if s.shares.m == nil {
		s.shares.m = map[string]store.ShareRole{}
	}
	s.shares.m[with] = role
}
