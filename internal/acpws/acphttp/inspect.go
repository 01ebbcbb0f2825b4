package acphttp

// StreamHeld reports whether a receiver holds session's stream ("" = the connection's) of connection id.
// Tests wait on it where a probing GET would itself become the receiver.
func (h *Server) StreamHeld(id, session string) bool {
	t := h.conns.get(id)
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.streams[session]
	return s != nil && s.held
}

// PendingRoutes is how many answers connection id still has to route; open is false when no such connection
// is open. An answer's route is forgotten once it is written: tests check that none is kept.
func (h *Server) PendingRoutes(id string) (n int, open bool) {
	t := h.conns.get(id)
	if t == nil {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.routes), true
}
