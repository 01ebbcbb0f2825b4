package jsstore

import (
	"sort"
	"time"

	"github.com/acp-gateway/gateway/internal/store"
)

// nodeTracker is the set of live nodes as the nodes bucket's watch reports it, and the incarnations whose key
// went away but whose loss is not declared yet (the loss guard was closed). It does no I/O and reads no clock:
// the watch loop feeds it and says what time it is.
type nodeTracker struct {
	self     string
	live     map[string]trackedNode // by node id
	suspects map[string]suspect     // by incarnation
}

type trackedNode struct {
	info store.NodeInfo
	rev  uint64
	seen time.Time // when its last beat reached this node
}

type suspect struct {
	info   store.NodeInfo
	reason string
}

func newNodeTracker(self string) *nodeTracker {
	return &nodeTracker{self: self, live: map[string]trackedNode{}, suspects: map[string]suspect{}}
}

// put records a beat (a key's new value) seen at now.
func (t *nodeTracker) put(info store.NodeInfo, rev uint64, now time.Time) []store.NodeEvent {
	delete(t.suspects, info.Incarnation) // back before its loss was declared: it was never lost
	old, known := t.live[info.ID]
	if known && rev <= old.rev {
		return nil // a stale read (the sweep's Get raced the watch)
	}
	t.live[info.ID] = trackedNode{info: info, rev: rev, seen: now}
	switch {
	case known && old.info.Incarnation == info.Incarnation:
		return []store.NodeEvent{{Kind: store.NodeBeat, Node: info}}
	case known:
		t.suspect(old.info, store.LossReplaced)
	}
	return []store.NodeEvent{{Kind: store.NodeJoined, Node: info}}
}

// gone records that node's key was deleted or expired.
func (t *nodeTracker) gone(node, reason string) {
	old, ok := t.live[node]
	if !ok {
		return
	}
	delete(t.live, node)
	t.suspect(old.info, reason)
}

func (t *nodeTracker) suspect(info store.NodeInfo, reason string) {
	if info.ID == t.self {
		return // this node does not declare itself lost; its beat loop finds out
	}
	t.suspects[info.Incarnation] = suspect{info: info, reason: reason}
}

// declare turns every suspect into a NodeLost event, if the loss guard is open; else it keeps them.
func (t *nodeTracker) declare(guardOpen bool) []store.NodeEvent {
	if !guardOpen || len(t.suspects) == 0 {
		return nil
	}
	evs := make([]store.NodeEvent, 0, len(t.suspects))
	for inc, s := range t.suspects {
		evs = append(evs, store.NodeEvent{Kind: store.NodeLost, Node: s.info, Reason: s.reason})
		delete(t.suspects, inc)
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Node.ID < evs[j].Node.ID })
	return evs
}

// toCheck lists the keys the sweep reads, with the revision this node knows (0 for a suspect): other nodes
// whose last beat reached this node more than a TTL before now (their key should have expired: the watch may
// have missed the marker), and suspects (their key may be back although the watch did not say so yet).
func (t *nodeTracker) toCheck(now time.Time) map[string]uint64 {
	out := map[string]uint64{}
	for id, n := range t.live {
		if id != t.self && now.Sub(n.seen) > NodeTTL {
			out[id] = n.rev
		}
	}
	for _, s := range t.suspects {
		if _, live := t.live[s.info.ID]; !live {
			out[s.info.ID] = 0
		}
	}
	return out
}

// nodes is the live set sorted by id.
func (t *nodeTracker) nodes() []store.NodeInfo {
	out := make([]store.NodeInfo, 0, len(t.live))
	for _, n := range t.live {
		out = append(out, n.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
