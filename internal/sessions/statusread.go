package sessions

import "github.com/acp-gateway/gateway/internal/store"

// statusLocked is the session's status. The caller holds mu.
func (s *Session) statusLocked() store.Status { return s.status }
