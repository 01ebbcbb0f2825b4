package core

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

// IsCold reports whether the session is only its directory entry (not hydrated).
func (c Control) IsCold() bool {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cold != nil
}

// Hydrate loads a cold session on its first use (its runner's: a stored one's log, a copy's live feed).
func (c Control) Hydrate() error {
	s := c.s
	return s.run.Hydrate()
}

// HydrateWith loads a cold session with load, once: concurrent callers wait for the same load, and a failed
// load is tried again by the next use. A session that is not cold returns at once.
func (c Control) HydrateWith(load func() error) error {
	s := c.s
	s.mu.Lock()
	cold := s.cold
	if cold == nil {
		s.mu.Unlock()
		return nil
	}
	if h := cold.attempt; h != nil {
		s.mu.Unlock()
		<-h.done
		return h.err
	}
	h := &hydration{done: make(chan struct{})}
	cold.attempt = h
	s.mu.Unlock()
	h.err = load()
	if h.err != nil {
		s.mu.Lock()
		cold.attempt = nil
		s.mu.Unlock()
		s.logger.Warn("session not hydrated from the store", "err", h.err)
	}
	close(h.done)
	return h.err
}
