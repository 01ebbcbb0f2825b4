package sessions

import (
	"context"
	"math"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
	"github.com/acp-gateway/gateway/internal/store"
)

// followHost is the registry as its followers' Host (package follow): a type of its own, so that what a
// follower asks stays off the Registry the faces use.
type followHost struct{ r *Registry }

var _ follow.Host = followHost{}

func (h followHost) StoppedLocked(s *core.Session) error { return h.r.stoppedLocked(s) }

func (h followHost) Now() time.Time { return h.r.now() }

func (h followHost) Call(ctx context.Context, node string, cmd store.Command) (store.Reply, error) {
	return h.r.call(ctx, node, cmd)
}

func (h followHost) LiveNode(node string) bool { return h.r.liveNode(node) }

func (h followHost) StoreHealthy() bool { return h.r.storeHealthy() }

func (h followHost) Forget(s *core.Session) { h.r.removeFollower(s) }

// Tombstone marks id removed for good: no directory entry, however recent, lists it again.
func (h followHost) Tombstone(id string) {
	h.r.mu.Lock()
	h.r.removed.add(id, math.MaxUint64)
	h.r.mu.Unlock()
}

// followConfig is the part of c a follower reads; c has its defaults.
func (c *Config) followConfig() *follow.Config {
	return &follow.Config{
		Store: c.Store, Clustered: c.Cluster != nil,
		StartTimeout: c.StartTimeout, CallTimeout: c.CallTimeout, CancelGrace: c.CancelGrace, StopGrace: c.StopGrace,
		DirWrite: durable.DirWriteTimeout,
	}
}
