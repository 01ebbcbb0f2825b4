package core

import (
	"slices"

	"github.com/acp-gateway/gateway/internal/principal"
)

// addFSDelegate puts d, a connection of who, on top of the session's delegates (an earlier offer of d moves
// there), until the release it returns takes this offer back.
func (s *Session) addFSDelegate(who principal.Principal, d FSDelegate) (release func()) {
	mine := &fsDelegation{who: who, d: d}
	s.mu.Lock()
	s.fsDelegates = append(slices.DeleteFunc(s.fsDelegates, func(x *fsDelegation) bool { return x.d == d }), mine)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.fsDelegates = slices.DeleteFunc(s.fsDelegates, func(x *fsDelegation) bool { return x == mine })
		s.mu.Unlock()
	}
}
