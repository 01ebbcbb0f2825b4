package sessions

// lock and unlock take and release the session's mu for role code that holds it across steps of its own (the
// local runner's prompt and MCP change, a follower reading its owner's node); the core's methods that end
// in Locked expect it held.
func (s *Session) lock() { s.mu.Lock() }

func (s *Session) unlock() { s.mu.Unlock() }
