package sessions

import (
	"context"

	"github.com/acp-gateway/gateway/internal/store"
)

// Nodes lists the gateway nodes that serve sessions (GET /v1/nodes): every live node in mode c, else this one
// alone, with its write-behind health (memory mode reports no store).
func (r *Registry) Nodes() []store.NodeInfo {
	if c := r.cfg.Cluster; c != nil {
		return c.Nodes()
	}
	self := store.NodeInfo{ID: r.cfg.NodeID, Incarnation: r.incarnation, Version: r.cfg.Version, StartedAt: r.startedAt, Agents: r.agentOrder}
	if r.cfg.Store != nil {
		self.Store = r.StoreState()
	}
	return []store.NodeInfo{self}
}

// RunCluster serves this node's part of a cluster (mode c) until ctx ends: it answers the commands other
// nodes route to the sessions it owns and keeps the directory of every node's sessions that listing and the
// follower caches read. It returns once both are set up, or with the error that kept them from it; without a
// cluster it returns nil at once.
func (r *Registry) RunCluster(ctx context.Context) error {
	if r.cfg.Cluster == nil {
		return nil
	}
	return r.runCluster(ctx)
}

// storeHealthy reports whether the cluster's store can make progress (store.StoreHealth); true outside mode
// c and for a cluster that cannot tell.
func (r *Registry) storeHealthy() bool {
	if h, ok := r.cfg.Cluster.(store.StoreHealth); ok {
		return h.Healthy()
	}
	return true
}
