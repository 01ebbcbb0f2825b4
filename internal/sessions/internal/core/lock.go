package core

// The session's mu, for role code whose own state it guards (a follower's owner node and feed) or that holds
// it across steps of its own (the local runner's prompt and MCP change). Such code changes the core only
// through the core's methods that end in Locked.

// withLock runs fn under the session's mu.
func (s *Session) withLock(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// lock and unlock take and release the session's mu where the critical section is not one block.
func (s *Session) lock() { s.mu.Lock() }

func (s *Session) unlock() { s.mu.Unlock() }
