package sessions

import (
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
)

// durableHost is the registry as the Host of its sessions' store links (package durable): a type of its
// own, so that what a link asks stays off the Registry the faces use.
type durableHost struct{ r *Registry }

var _ durable.Host = durableHost{}

func (h durableHost) Now() time.Time { return h.r.now() }

func (h durableHost) StoppedLocked(s *core.Session) error { return h.r.stoppedLocked(s) }

// StandDown is the local runner's: the link that found the session taken over cannot be a follower's.
func (h durableHost) StandDown(s *core.Session) { localOf(s).standDown() }

// newLink is the store link of s, a session this node runs, whose entry is at revision rev.
func (r *Registry) newLink(s *Session, rev uint64) *durable.Link {
	return durable.New(durableHost{r}, r.durableCfg, s, rev)
}
