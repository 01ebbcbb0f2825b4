package sessions

import "github.com/acp-gateway/gateway/internal/store"

// A restored session is cold until its first use hydrates it from the log (recover.go): it lists what its
// directory entry says.

// coldState is what a cold session lists, and its hydration in progress.
type coldState struct {
	title    string
	lastTurn *LastTurnView
	lastSeq  uint64
	status   store.Status // the status listed: the entry's (a follower's: the latest entry's, or its own fold's)
	reason   string
	rev      uint64     // the directory revision listed (a follower: an older entry the watch delivers late is not)
	attempt  *hydration // the hydration in progress, nil when none
}

// hydration is one attempt at loading a cold session; every concurrent first use waits for the same one.
type hydration struct {
	done chan struct{}
	err  error // set before done is closed
}

// isCold reports whether the session is only its directory entry (not hydrated).
func (s *Session) isCold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cold != nil
}
