package core

// The session's mu, for role code whose own state it guards (a follower's owner node and feed) or that holds
// it across steps of its own (the local runner's prompt and MCP change). Such code changes the core only
// through the core's methods that end in Locked.

// WithLock runs fn under the session's mu.
func (c Control) WithLock(fn func()) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// Lock and unlock take and release the session's mu where the critical section is not one block.
func (c Control) Lock() { c.s.mu.Lock() }

// Unlock releases the session's mu that Lock took.
func (c Control) Unlock() { c.s.mu.Unlock() }
