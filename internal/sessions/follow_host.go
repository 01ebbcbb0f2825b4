package sessions

import (
	"context"
	"math"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
	"github.com/acp-gateway/gateway/internal/store"
)

// followHost is the registry as its followers' Host (package follow): a type of its own, so that what a
// follower asks stays off the Registry the faces use.
type followHost struct{ r *Registry }

var (
	_ follow.Host      = followHost{}
	_ follow.ServeHost = followHost{}
)

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

// owned is a session this node owns, hydrated; a follower is not one.
func (r *Registry) owned(id string) (*Session, error) {
	r.mu.Lock()
	s, ok := r.sessions[id]
	r.mu.Unlock()
	if !ok {
		return nil, sessionerr.ErrNotFound
	}
	if err := core.ControlOf(s).Hydrate(); err != nil {
		return nil, err
	}
	return s, nil
}

func (h followHost) Owned(id string) (*core.Session, error) { return h.r.owned(id) }

func (h followHost) Create(ctx context.Context, a follow.CreateArgs, mcp []agents.MCPServer, owner principal.Principal) (*core.Session, error) {
	return h.r.Create(ctx, CreateOptions{Agent: a.Agent, Cwd: a.Cwd, AdditionalDirs: a.AdditionalDirs, PermissionPolicy: a.PermissionPolicy, Owner: owner, MCPServers: mcp})
}

func (h followHost) Fork(ctx context.Context, who principal.Principal, src *core.Session, a follow.ForkArgs, mcp []agents.MCPServer) (*core.Session, error) {
	return h.r.ForkAs(ctx, who, src, ForkOptions{Cwd: a.Cwd, AdditionalDirs: a.AdditionalDirs, MCPServers: mcp})
}

func (h followHost) DirRevision(ctx context.Context, s *core.Session) uint64 {
	return durableOf(s).DirRevision(ctx)
}
