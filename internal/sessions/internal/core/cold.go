package core

// A restored session is cold until its first use hydrates it from the log (sessions/recover.go): it lists what its
// directory entry says (package cold).

// IsCold reports whether the session is only its directory entry (not hydrated).
func (c Control) IsCold() bool {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cold != nil
}

// Hydrate loads a cold session on its first use (its runner's: a stored one's log, a copy's live feed).
func (c Control) Hydrate() error { return c.s.run.Hydrate() }

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
	ran, err := cold.Load(&s.mu, load)
	if ran && err != nil {
		s.logger.Warn("session not hydrated from the store", "err", err)
	}
	return err
}
