package takeover

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/store"
)

// Node loss and return (mode c, docs/cluster.md §5). When a node's heartbeat is lost, every survivor tries to
// take over each of its sessions that was left open; the directory's compare-and-swap lets exactly one win,
// and the winner closes the stored log as an unclean stop is closed (closeStored), in a new epoch from the
// durable head H+1: denials by node_lost, the open turn ended with "node lost", session_status failed
// node_lost. The entry stays the lost node's (its cwd and the agent's own state are there) without an
// incarnation. A detached session with every frame stored has nothing open: it stays detached and readable,
// and its prompts get 503 owner_unavailable while its node is gone. A node that comes back (Recover) claims
// its failed/node_lost entries and makes them detached again (nodeReturnClose), so a prompt re-attaches them.
// A node that was only cut off and finds its sessions taken over stands them down (Host.StandDown).

// ReasonNodeLost is the status reason of a session whose node was lost (and permission_resolved.by of its
// denials).
const ReasonNodeLost = "node_lost"

const (
	// NodeLostText is the error of a turn a node loss ended and the reason of its denials.
	NodeLostText     = "node lost"
	nodeReturnReason = "node returned"
)

var (
	nodeLostClose = closeSpec{by: ReasonNodeLost, deny: NodeLostText, turnText: NodeLostText,
		status: store.StatusFailed, reason: ReasonNodeLost, takeover: true}
	nodeReturnClose = closeSpec{by: ReasonNodeLost, deny: NodeLostText, turnText: NodeLostText,
		status: store.StatusDetached, reason: nodeReturnReason, revive: true}
)

// nodeEvents hands the cluster's node events to one goroutine of the registry: WatchNodes' callback must not
// block.
type nodeEvents struct {
	self string // Static after construction; this node's id.
	mu   sync.Mutex
	q    []store.NodeEvent // Guarded by mu.
	wake chan struct{}
}

func (q *nodeEvents) push(ev store.NodeEvent) {
	if ev.Kind != store.NodeLost && (ev.Kind != store.NodeJoined || ev.Node.ID != q.self) {
		return // a loss, or this node back after its key expired
	}
	q.mu.Lock()
	q.q = append(q.q, ev)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *nodeEvents) take() []store.NodeEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	evs := q.q
	q.q = nil
	return evs
}

// WatchNodes takes over the sessions of every node declared lost, and stands this node's sessions down if
// another process took its node id, until ctx ends.
func (t *Taker) WatchNodes(ctx context.Context) {
	q := &nodeEvents{self: t.cfg.NodeID, wake: make(chan struct{}, 1)}
	stop := t.cfg.Cluster.WatchNodes(q.push)
	go func() {
		defer stop()
		displaced := t.cfg.Cluster.Displaced()
		sweep := time.NewTimer(t.cfg.OrphanSweepAfter)
		defer sweep.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-sweep.C:
				if !t.sweepOrphans(ctx) {
					sweep.Reset(orphanSweepRetry)
				}
			case <-displaced:
				displaced = nil
				t.cfg.Logger.Warn("another process took this node's id: standing every session down")
				for _, s := range t.host.Sessions() {
					if !core.ControlOf(s).IsCold() {
						go t.host.StandDown(s)
					}
				}
			case <-q.wake:
				for _, ev := range q.take() {
					if ev.Kind == store.NodeLost {
						t.nodeLost(ctx, ev)
					} else {
						t.checkTakenOver(ctx)
					}
				}
			}
		}
	}()
}

// nodeLost takes over every session the lost node incarnation left open, and every takeover it was doing.
func (t *Taker) nodeLost(ctx context.Context, ev store.NodeEvent) {
	t.cfg.Logger.Warn("node lost", "node", ev.Node.ID, "incarnation", ev.Node.Incarnation, "reason", ev.Reason)
	lctx, cancel := context.WithTimeout(ctx, durable.DirWriteTimeout)
	entries, revs, err := t.ListDir(lctx)
	cancel()
	if err != nil {
		t.cfg.Logger.Warn("node lost: its sessions not taken over (directory unavailable)", "node", ev.Node.ID, "err", err)
		return
	}
	for i, e := range entries {
		if ctx.Err() != nil {
			return
		}
		if orphanedBy(e, ev) {
			t.takeOver(ctx, e, revs[i], ev)
		}
	}
}

// orphanSweepRetry is how soon a sweep that could not run (the loss guard closed, the directory unavailable)
// is tried again.
const orphanSweepRetry = 2 * time.Second

// lossNotLive is the reason of the loss the orphan sweep infers: the node is not among the live ones.
const lossNotLive = "not_live"

// sweepOrphans takes over every session a node that is not live left open: the sessions of nodes that were
// gone before this one watched (their loss was never an event here) and the takeovers such a node left
// half done. It runs once, after the node watch has run for OrphanSweepAfter (every live node has beaten by
// then), on the goroutine that handles node events, and the takeover is the one of a NodeLost: the claim's
// compare-and-swap lets one survivor win. It reports false when it could not run: the loss guard is closed
// (this node's own beats are failing) or the directory is unavailable.
func (t *Taker) sweepOrphans(ctx context.Context) bool {
	if g, ok := t.cfg.Cluster.(store.LossGuard); ok && !g.MayDeclareLoss() {
		return false
	}
	live := map[string]bool{}
	for _, n := range t.cfg.Cluster.Nodes() {
		live[n.ID] = true
	}
	lctx, cancel := context.WithTimeout(ctx, durable.DirWriteTimeout)
	entries, revs, err := t.ListDir(lctx)
	cancel()
	if err != nil {
		t.cfg.Logger.Warn("orphan sweep: directory unavailable; trying again", "err", err, "in", orphanSweepRetry)
		return false
	}
	for i, e := range entries {
		if ctx.Err() != nil {
			return true
		}
		if ev, ok := orphanEvent(e, live); ok {
			t.cfg.Logger.Warn("session of a node that is not live", "session", e.ID, "owner", e.Owner, "closer", e.Closer, "status", e.Status)
			t.takeOver(ctx, e, revs[i], ev)
		}
	}
	return true
}

// orphanEvent is the loss that left e open if the node it waits on is not live: its closer's (a takeover cut
// short) or else its owner's incarnation. ok reports whether that loss orphaned e (orphanedBy).
func orphanEvent(e store.DirEntry, live map[string]bool) (ev store.NodeEvent, ok bool) {
	gone := e.Owner
	if e.Closer != "" {
		gone = e.Closer
	}
	if gone == "" || live[gone] {
		return store.NodeEvent{}, false
	}
	ev = store.NodeEvent{Kind: store.NodeLost, Node: store.NodeInfo{ID: gone}, Reason: lossNotLive}
	if e.Closer == "" {
		ev.Node.Incarnation = e.Incarnation
	}
	return ev, orphanedBy(e, ev)
}

// orphanedBy reports whether the lost incarnation of ev left e open: e is that incarnation's and live (or
// detached with frames missing from the store), or the lost node was closing another node's session.
func orphanedBy(e store.DirEntry, ev store.NodeEvent) bool {
	x := ev.Node.ID
	switch {
	case e.Status == store.StatusClosed:
		return false
	case e.Closer != "":
		return e.Closer == x && e.Owner != x // a takeover cut short; its own Recover's is its next start's
	case e.Owner != x || e.Incarnation != ev.Node.Incarnation:
		return false // another node's, or a later incarnation's (which recovered it), or taken over already
	}
	return uncleanEntry(e)
}

// takeOver closes a session the lost node left open, if this node wins the claim. A lost claim re-reads the
// entry: another survivor won it (it carries that closer now) or the owner changed it.
func (t *Taker) takeOver(ctx context.Context, e store.DirEntry, rev uint64, ev store.NodeEvent) {
	for range 3 {
		tctx, cancel := context.WithTimeout(ctx, 2*durable.DirWriteTimeout)
		done, _, err := t.closeStored(tctx, e, rev, nodeLostClose)
		cancel()
		if err == nil {
			t.cfg.Logger.Warn("took over a session of a lost node", "session", e.ID, "owner", e.Owner, "status", done.Status, "reason", done.Reason)
			return
		}
		if !errors.Is(err, errNotClaimed) {
			t.cfg.Logger.Warn("takeover of a lost node's session failed", "session", e.ID, "owner", e.Owner, "err", err)
			return
		}
		gctx, cancel := context.WithTimeout(ctx, durable.DirWriteTimeout)
		e, rev, err = t.cfg.Store.Dir().Get(gctx, e.ID)
		cancel()
		if err != nil || !orphanedBy(e, ev) {
			return // removed, or another survivor claimed it
		}
	}
}

// checkTakenOver stands down every hydrated session of this node whose entry says another node took it over:
// this node's key expired (it was cut off for a TTL) and the others may have declared it lost. The directory
// watch may be slow to deliver what changed meanwhile, and a session with nothing to write would not find out.
func (t *Taker) checkTakenOver(ctx context.Context) {
	for _, s := range t.host.Sessions() {
		if core.ControlOf(s).IsCold() || core.ControlOf(s).StoodDownNow() {
			continue
		}
		gctx, cancel := context.WithTimeout(ctx, durable.DirWriteTimeout)
		e, _, err := t.cfg.Store.Dir().Get(gctx, s.ID)
		cancel()
		if err == nil && t.TakenFrom(e) {
			t.cfg.Logger.Warn("a session of this node was taken over while it was cut off", "session", s.ID, "closer", e.Closer, "status", e.Status, "reason", e.Reason)
			go t.host.StandDown(s)
		}
	}
}

// TakenFrom reports whether a directory change of this node's own entry says another node took the session
// over (or is doing so) from this process: a takeover's claim or its result.
func (t *Taker) TakenFrom(e store.DirEntry) bool {
	return e.Owner == t.cfg.NodeID && e.Incarnation != t.cfg.Incarnation && e.Closer != t.cfg.NodeID &&
		(e.Closer != "" || (e.Status == store.StatusFailed && e.Reason == ReasonNodeLost))
}
