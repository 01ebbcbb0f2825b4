package follow

import (
	"context"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// Host is what a follower asks of the registry that lists it. The registry implements it with a small
// adapter, so none of it becomes a public method of the Registry the faces use.
type Host interface {
	// StoppedLocked is ErrShuttingDown or ErrClosed once the registry's shutdown or s's close has begun. The
	// caller holds s's lock.
	StoppedLocked(s *core.Session) error
	Now() time.Time
	// Call routes cmd to node and returns the reply, with the error the owner replied as its sentinel.
	Call(ctx context.Context, node string, cmd store.Command) (store.Reply, error)
	// LiveNode reports whether node beats in the cluster.
	LiveNode(node string) bool
	// StoreHealthy reports whether the cluster's store can make progress.
	StoreHealthy() bool
	// Forget drops s from the registry's followers, so a lookup no longer finds this copy.
	Forget(s *core.Session)
	// Tombstone keeps the session id from being listed again: a closed session never opens again.
	Tombstone(id string)
}

// Config is what a follower reads of the registry's settings; the registry builds it once.
type Config struct {
	Store     store.Store
	Clustered bool // mode c: the view names the owner's node
	// The registry's bounds, with their defaults applied.
	StartTimeout, CallTimeout, CancelGrace, StopGrace time.Duration
	DirWrite                                          time.Duration // bounds one directory write
}

// StartBound is how long a routed operation that may start the agent (a create, a prompt that re-attaches)
// may take on the owner: initialize and session/new or session/load, each bounded by StartTimeout.
func (c *Config) StartBound() time.Duration { return 2*c.StartTimeout + 5*time.Second }

// CloseBound is how long a routed close may take on the owner: the turn's cancel, the agent's stop and the
// directory write.
func (c *Config) CloseBound() time.Duration { return c.CancelGrace + 4*c.StopGrace + c.DirWrite }
