package jsstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store"
)

func node(id, inc string) store.NodeInfo { return store.NodeInfo{ID: id, Incarnation: inc} }

func evString(evs []store.NodeEvent) string {
	s := ""
	for _, e := range evs {
		s += fmt.Sprintf("%s %s/%s %s;", e.Kind, e.Node.ID, e.Node.Incarnation, e.Reason)
	}
	return s
}

// TestNodeTracker walks the tracker through joins, beats, losses (deleted, expired, replaced), a loss held
// while the guard is closed, a node back before its loss was declared, and this node's own key.
func TestNodeTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tr := newNodeTracker("self")
	steps := []struct {
		name string
		do   func() []store.NodeEvent
		want string
	}{
		{"self joins", func() []store.NodeEvent { return tr.put(node("self", "s1"), 1, t0) }, "joined self/s1 ;"},
		{"a joins", func() []store.NodeEvent { return tr.put(node("a", "a1"), 2, t0) }, "joined a/a1 ;"},
		{"a beats", func() []store.NodeEvent { return tr.put(node("a", "a1"), 3, t0) }, "beat a/a1 ;"},
		{"stale read of a", func() []store.NodeEvent { return tr.put(node("a", "a1"), 2, t0) }, ""},
		{"a deleted, guard closed", func() []store.NodeEvent { tr.gone("a", store.LossDeleted); return tr.declare(false) }, ""},
		{"guard opens", func() []store.NodeEvent { return tr.declare(true) }, "lost a/a1 deleted;"},
		{"declared once", func() []store.NodeEvent { return tr.declare(true) }, ""},
		{"b joins", func() []store.NodeEvent { return tr.put(node("b", "b1"), 5, t0) }, "joined b/b1 ;"},
		{"b expires, guard closed", func() []store.NodeEvent { tr.gone("b", store.LossExpired); return tr.declare(false) }, ""},
		{"b back, same incarnation", func() []store.NodeEvent { return tr.put(node("b", "b1"), 7, t0) }, "joined b/b1 ;"},
		{"nothing held for b", func() []store.NodeEvent { return tr.declare(true) }, ""},
		{"b replaced without a marker", func() []store.NodeEvent { return tr.put(node("b", "b2"), 8, t0) }, "joined b/b2 ;"},
		{"b1 declared replaced", func() []store.NodeEvent { return tr.declare(true) }, "lost b/b1 replaced;"},
		{"self expires", func() []store.NodeEvent { tr.gone("self", store.LossExpired); return tr.declare(true) }, ""},
		{"unknown key deleted", func() []store.NodeEvent { tr.gone("zz", store.LossDeleted); return tr.declare(true) }, ""},
	}
	for _, s := range steps {
		if got := evString(s.do()); got != s.want {
			t.Fatalf("%s: events %q, want %q", s.name, got, s.want)
		}
	}
	if got := tr.nodes(); len(got) != 1 || got[0].Incarnation != "b2" {
		t.Fatalf("live nodes %+v, want b/b2 only", got)
	}
}

// TestNodeTrackerToCheck: a node whose last beat reached us more than a TTL ago, and a suspect, are listed
// for the sweep's check; this node never is.
func TestNodeTrackerToCheck(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tr := newNodeTracker("self")
	tr.put(node("self", "s1"), 1, t0)
	tr.put(node("a", "a1"), 2, t0)
	tr.put(node("b", "b1"), 3, t0.Add(NodeTTL))
	if got := tr.toCheck(t0.Add(NodeTTL)); len(got) != 0 {
		t.Fatalf("to check at exactly one TTL: %v", got)
	}
	got := tr.toCheck(t0.Add(NodeTTL + time.Millisecond))
	if len(got) != 1 || got["a"] != 2 {
		t.Fatalf("to check %v, want a at revision 2", got)
	}
	tr.gone("b", store.LossExpired)
	if got := tr.toCheck(t0.Add(NodeTTL)); len(got) != 1 || got["b"] != 0 {
		t.Fatalf("to check %v, want the suspect b", got)
	}
}

// TestLossGuard: losses may be declared only while this node's last beat is younger than a TTL and its beats
// have succeeded for at least a TTL.
func TestLossGuard(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var h beatHealth
	if h.mayDeclareLoss(t0) {
		t.Fatal("open before any beat")
	}
	h.succeeded(t0)
	h.succeeded(t0.Add(BeatInterval))
	if h.mayDeclareLoss(t0.Add(NodeTTL - time.Millisecond)) {
		t.Fatal("open before beats succeeded for a TTL")
	}
	h.succeeded(t0.Add(NodeTTL))
	if !h.mayDeclareLoss(t0.Add(NodeTTL)) {
		t.Fatal("closed after a TTL of good beats")
	}
	if h.mayDeclareLoss(t0.Add(2 * NodeTTL)) {
		t.Fatal("open although the last good beat is a TTL old")
	}
	h.failed()
	h.succeeded(t0.Add(2 * NodeTTL))
	if h.mayDeclareLoss(t0.Add(2*NodeTTL + BeatInterval)) {
		t.Fatal("open right after a failed beat")
	}
	h.succeeded(t0.Add(3 * NodeTTL))
	if !h.mayDeclareLoss(t0.Add(3 * NodeTTL)) {
		t.Fatal("closed a TTL after the outage ended")
	}
}
