package jsstore

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// Test views of a Cluster's loss guard and sweeps, so tests wait on conditions instead of time.

// LossGuardOpen reports whether c may declare losses now.
func (c *Cluster) LossGuardOpen() bool { return c.health.mayDeclareLoss(time.Now()) }

// Sweeps counts c's finished sweeps.
func (c *Cluster) Sweeps() uint64 { return c.sweeps.Load() }

// Running counts c's command handlers running.
func (c *Cluster) Running() int64 { return c.running.Load() }

// ClaimThrough claims node for a new incarnation as Join does, through kv in place of the nodes bucket (a
// test's wrapper of NodesBucket).
func (s *Store) ClaimThrough(ctx context.Context, kv jetstream.KeyValue, node string) (uint64, error) {
	c := &Cluster{st: s, kv: kv, opts: ClusterOptions{Node: node}, self: store.NodeInfo{ID: node, Incarnation: "claim-" + node}}
	return c.claim(ctx)
}

// NodesBucket opens the nodes bucket as Join does.
func (s *Store) NodesBucket(ctx context.Context) (jetstream.KeyValue, error) {
	return s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: s.opts.nodesBucket(), History: 1, TTL: NodeTTL, LimitMarkerTTL: NodeTTL, Storage: jetstream.FileStorage,
	})
}
