package main

import (
	"net"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/wsticket"
)

// storeBacking is what a store mode gives the registry and the faces: the store and this node's id (modes b
// and c), the cluster and the shared WebSocket tickets (mode c). The zero value is memory mode.
type storeBacking struct {
	store   store.Store
	nodeID  string
	cluster store.Cluster  // nil unless --nats-url
	tickets wsticket.Store // nil = tickets in this process's memory
	up      func() bool    // the store's connection is up
}

// configure is the registry configuration of the mode: the store, this node, the cluster, and detaching
// instead of closing at shutdown and when idle. In memory mode it is cfg unchanged.
func (b storeBacking) configure(cfg sessions.Config) sessions.Config {
	if b.store == nil {
		return cfg
	}
	cfg.Store, cfg.NodeID, cfg.DetachIdle, cfg.DetachOnShutdown = b.store, b.nodeID, true, true
	if b.cluster != nil {
		cfg.Cluster = b.cluster
	}
	return cfg
}

// advertise is the URL GET /v1/nodes shows for this node: --advertise-url, else the address it listens on.
func (c *config) advertise(addr net.Addr) string {
	if c.advertiseURL != "" {
		return c.advertiseURL
	}
	return c.scheme() + "://" + addr.String()
}
