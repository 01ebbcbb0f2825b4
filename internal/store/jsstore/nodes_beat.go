package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// claim creates this incarnation's key. A key held by another incarnation is waited on until it goes (a
// delete or the TTL's marker), at most one TTL and a beat from now.
func (c *Cluster) claim(ctx context.Context) (uint64, error) {
	value, err := c.beatValue()
	if err != nil {
		return 0, err
	}
	rev, err := c.kv.Create(ctx, c.opts.Node, value)
	if err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
		return rev, wrapErr("claim node "+c.opts.Node, err)
	}
	wctx, cancel := context.WithTimeout(ctx, NodeTTL+BeatInterval)
	defer cancel()
	w, err := c.kv.Watch(wctx, c.opts.Node)
	if err != nil {
		return 0, fmt.Errorf("jsstore: watch node %s: %w", c.opts.Node, err)
	}
	defer func() { _ = w.Stop() }()
	var firstRev, lastRev uint64 // the key's revisions seen while waiting: a live holder beats, changing it
	for {
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			if firstRev != 0 && lastRev == firstRev {
				// No beat for a whole TTL and a beat: the holder is gone and the server has not expired its key
				// yet (it can be late under load). Take the key over by revision, so a beat that lands now wins.
				if rev, err := c.kv.Update(ctx, c.opts.Node, value, lastRev); err == nil {
					return rev, nil
				}
			}
			return 0, fmt.Errorf("%w: %q still beats after %s", ErrNodeIDInUse, c.opts.Node, NodeTTL+BeatInterval)
		case kve, ok := <-w.Updates():
			if !ok {
				return 0, fmt.Errorf("jsstore: watch node %s ended", c.opts.Node)
			}
			if kve != nil && kve.Operation() == jetstream.KeyValuePut {
				if firstRev == 0 {
					firstRev = kve.Revision()
				}
				lastRev = kve.Revision()
				continue // still held
			}
			// The key is gone (or the watch's initial pass ended): try again.
			rev, err := c.kv.Create(wctx, c.opts.Node, value)
			if err == nil {
				return rev, nil
			}
			if !errors.Is(err, jetstream.ErrKeyExists) {
				return 0, wrapErr("claim node "+c.opts.Node, err)
			}
			if kve != nil {
				// Create reads the key back, and a replica behind the leader may still show the last beat:
				// build on the delete's own revision, which a beat landing now would change.
				if rev, err := c.kv.Update(wctx, c.opts.Node, value, kve.Revision()); err == nil {
					return rev, nil
				}
			}
		}
	}
}

// beatValue is this node's key value now.
func (c *Cluster) beatValue() ([]byte, error) {
	info := c.Self()
	if c.opts.StoreState != nil {
		info.Store = c.opts.StoreState()
	} else {
		info.Store = store.StoreState{State: "ok"}
	}
	return json.Marshal(info)
}

// beatLoop renews this node's key every BeatInterval until Close, or until another incarnation holds it.
func (c *Cluster) beatLoop() {
	defer c.wg.Done()
	t := time.NewTicker(BeatInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			if !c.beat() {
				return
			}
		}
	}
}

// beat writes the key once, guarded by the revision of the last beat. It reports false when the node was
// displaced. A key that expired (this node was cut off for a TTL) is created again by the same incarnation:
// the others may have declared it lost meanwhile, which the session layer reads from the directory.
func (c *Cluster) beat() bool {
	ctx, cancel := context.WithTimeout(c.ctx, BeatInterval)
	defer cancel()
	value, err := c.beatValue()
	if err != nil {
		c.health.failed()
		return true
	}
	c.mu.Lock()
	rev := c.rev
	c.mu.Unlock()
	next, err := c.kv.Update(ctx, c.opts.Node, value, rev)
	recreated := false
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		next, recreated, err = c.reclaim(ctx, value)
	}
	switch {
	case errors.Is(err, errDisplaced):
		c.displacedOnce.Do(func() { close(c.displaced) })
		return false
	case err != nil:
		c.health.failed()
	default:
		c.mu.Lock()
		c.rev = next
		c.mu.Unlock()
		c.health.succeeded(time.Now())
		if recreated {
			// The others may have declared this node lost while its key was gone: its watchers hear that
			// it is back (store.Cluster.WatchNodes), whatever the bucket's watch delivers.
			c.dispatchMu.Lock()
			c.deliver([]store.NodeEvent{{Kind: store.NodeJoined, Node: c.Self()}})
			c.dispatchMu.Unlock()
		}
	}
	return true
}

var errDisplaced = errors.New("jsstore: node id taken by another incarnation")

// reclaim handles a beat whose revision no longer matched: the key expired or was deleted (create it again),
// or an earlier beat landed without its ack reaching us (take its revision), or another incarnation holds it.
// It reports whether it created the key again.
func (c *Cluster) reclaim(ctx context.Context, value []byte) (uint64, bool, error) {
	kve, err := leaderGet(ctx, c.conn(), c.st.opts.nodesBucket(), c.opts.Node)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		rev, err := c.kv.Create(ctx, c.opts.Node, value)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return 0, false, err // someone created it first: the next beat finds out who
		}
		return rev, err == nil, err
	}
	if err != nil {
		return 0, false, err
	}
	var holder store.NodeInfo
	if json.Unmarshal(kve.Value(), &holder) == nil && holder.Incarnation == c.self.Incarnation {
		rev, err := c.kv.Update(ctx, c.opts.Node, value, kve.Revision())
		return rev, false, err
	}
	return 0, false, errDisplaced
}

// beatHealth is what the loss rule needs to know about this node's own beats: when one last succeeded, and
// since when they have succeeded without a failure (JetStream reachable).
type beatHealth struct {
	mu     sync.Mutex
	lastOK time.Time // Guarded by mu.
	okFrom time.Time // Guarded by mu; zero after a failure until the next success.
}

func (h *beatHealth) succeeded(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastOK = now
	if h.okFrom.IsZero() {
		h.okFrom = now
	}
}

func (h *beatHealth) failed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.okFrom = time.Time{}
}

// mayDeclareLoss is the guard of docs/cluster.md §5: this node's own last beat succeeded less than a TTL ago
// and its beats have succeeded for at least a TTL, so it does not blame others for its own outage.
func (h *beatHealth) mayDeclareLoss(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.lastOK.IsZero() && now.Sub(h.lastOK) < NodeTTL && !h.okFrom.IsZero() && now.Sub(h.okFrom) >= NodeTTL
}

// MayDeclareLoss reports whether the loss guard is open now (store.LossGuard): this node's beats have
// succeeded for a TTL, the last one less than a TTL ago.
func (c *Cluster) MayDeclareLoss() bool { return c.health.mayDeclareLoss(time.Now()) }

func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("jsstore: %s: %w", what, err)
}

// LastBeat is when this node's last beat succeeded (what a loss's timing is measured from).
func (c *Cluster) LastBeat() time.Time {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	return c.health.lastOK
}

// Healthy reports whether this node's last beat succeeded less than a TTL ago: the nodes bucket, a
// replicated stream, took a write, so the store can make progress (a quorum and a meta leader exist). While
// it is false /readyz answers 503 (docs/cluster.md §6).
func (c *Cluster) Healthy() bool { return time.Since(c.LastBeat()) < NodeTTL }
