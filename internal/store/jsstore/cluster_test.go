package jsstore_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// eventLog records a cluster's node events.
type eventLog struct {
	mu  sync.Mutex
	evs []store.NodeEvent
	at  []time.Time
}

func (l *eventLog) add(e store.NodeEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, e)
	l.at = append(l.at, time.Now())
}

// find returns the first event matching and when it arrived.
func (l *eventLog) find(kind store.NodeEventKind, node, incarnation string) (store.NodeEvent, time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.evs {
		if e.Kind == kind && e.Node.ID == node && (incarnation == "" || e.Node.Incarnation == incarnation) {
			return e, l.at[i], true
		}
	}
	return store.NodeEvent{}, time.Time{}, false
}

func (l *eventLog) count(kind store.NodeEventKind) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// join joins st as node id and leaves when the test ends.
func join(t testing.TB, st *jsstore.Store, id string) *jsstore.Cluster {
	t.Helper()
	c, err := st.Join(ctxT(t), jsstore.ClusterOptions{Node: id, URL: "http://" + id + ".test:8080", Agents: []string{"demo"}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func watch(t testing.TB, c *jsstore.Cluster) *eventLog {
	l := &eventLog{}
	stop := c.WatchNodes(l.add)
	t.Cleanup(stop)
	return l
}

// waitGuardOpen waits until c may declare losses (its beats succeeded for a TTL).
func waitGuardOpen(t testing.TB, c *jsstore.Cluster) {
	waitFor(t, "the loss guard to open", func() bool { return c.LossGuardOpen() })
}

// TestNodesJoinBeatAndLeave: two nodes see each other join and beat with the values they advertise; a clean
// leave (key deleted) is a loss with reason "deleted" on the other, and Nodes drops it.
func TestNodesJoinBeatAndLeave(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	a := join(t, open(t, srv, jsstore.Options{}), "a")
	b := join(t, open(t, srv, jsstore.Options{}), "b")
	ev := watch(t, a)
	waitFor(t, "a to see b beat", func() bool { _, _, ok := ev.find(store.NodeBeat, "b", b.Self().Incarnation); return ok })
	nodes := a.Nodes()
	if len(nodes) != 2 || nodes[0].ID != "a" || nodes[1].ID != "b" {
		t.Fatalf("nodes %+v", nodes)
	}
	if n := nodes[1]; n.Incarnation != b.Self().Incarnation || n.URL != "http://b.test:8080" || n.Version != "test" ||
		len(n.Agents) != 1 || n.Store.State != "ok" || n.StartedAt.IsZero() {
		t.Fatalf("b as a sees it: %+v", n)
	}
	waitGuardOpen(t, a)
	b.Close()
	waitFor(t, "a to declare b lost", func() bool { _, _, ok := ev.find(store.NodeLost, "b", ""); return ok })
	if e, _, _ := ev.find(store.NodeLost, "b", ""); e.Reason != store.LossDeleted || e.Node.Incarnation != b.Self().Incarnation {
		t.Fatalf("loss event %+v", e)
	}
	if nodes := a.Nodes(); len(nodes) != 1 || nodes[0].ID != "a" {
		t.Fatalf("nodes after b left: %+v", nodes)
	}
}

// TestNodeLossByExpiry: a node whose connection dies stops beating; its key expires (limit marker) and the
// other node declares it lost with reason "expired". The time from the close to the event is logged.
func TestNodeLossByExpiry(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	a := join(t, open(t, srv, jsstore.Options{}), "a")
	ncB := srv.Connect()
	stB, err := jsstore.Open(ctxT(t), ncB, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := join(t, stB, "b")
	ev := watch(t, a)
	waitGuardOpen(t, a)
	beats := ev.count(store.NodeBeat)
	waitFor(t, "a beat of b after the guard opened", func() bool { return ev.count(store.NodeBeat) > beats })
	ncB.Close() // b's process as the cluster sees a kill -9: no more beats, no delete
	killed := time.Now()
	waitFor(t, "a to declare b lost", func() bool { _, _, ok := ev.find(store.NodeLost, "b", ""); return ok })
	e, at, _ := ev.find(store.NodeLost, "b", "")
	if e.Reason != store.LossExpired || e.Node.Incarnation != b.Self().Incarnation {
		t.Fatalf("loss event %+v", e)
	}
	t.Logf("b lost %v after its connection closed", at.Sub(killed).Round(time.Millisecond))
}

// TestNodeIDHeldByLiveProcess: a second process cannot join under the id of a live one; it waits one TTL
// (and a beat) for the key to go, then gives up with ErrNodeIDInUse, and the first keeps its id.
func TestNodeIDHeldByLiveProcess(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	a := join(t, open(t, srv, jsstore.Options{}), "a")
	_, err := open(t, srv, jsstore.Options{}).Join(ctxT(t), jsstore.ClusterOptions{Node: "a"})
	if !errors.Is(err, jsstore.ErrNodeIDInUse) {
		t.Fatalf("second join: %v, want ErrNodeIDInUse", err)
	}
	select {
	case <-a.Displaced():
		t.Fatal("the live holder was displaced")
	default:
	}
	if nodes := a.Nodes(); len(nodes) != 1 || nodes[0].Incarnation != a.Self().Incarnation {
		t.Fatalf("nodes %+v", nodes)
	}
}

// TestNodeIDAfterCrash: a process restarted under the id of one that died (connection gone, key still there)
// waits for the key to expire and joins as a new incarnation; the watcher declares the old one lost.
func TestNodeIDAfterCrash(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	w := join(t, open(t, srv, jsstore.Options{}), "w")
	ev := watch(t, w)
	nc := srv.Connect()
	st, err := jsstore.Open(ctxT(t), nc, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := join(t, st, "a")
	nc.Close()
	again := join(t, open(t, srv, jsstore.Options{}), "a")
	if again.Self().Incarnation == old.Self().Incarnation {
		t.Fatal("same incarnation after a restart")
	}
	waitFor(t, "w to see the new incarnation", func() bool { _, _, ok := ev.find(store.NodeJoined, "a", again.Self().Incarnation); return ok })
	waitFor(t, "w to declare the old incarnation lost", func() bool { _, _, ok := ev.find(store.NodeLost, "a", old.Self().Incarnation); return ok })
	if _, _, ok := ev.find(store.NodeLost, "a", again.Self().Incarnation); ok {
		t.Fatal("the new incarnation was declared lost")
	}
}

// TestNoLossAfterJetStreamOutage: the server is down for longer than a TTL, so every key is past its age when
// it comes back. Nodes beat again, and no node declares another lost: the guard holds the suspects until
// beats have succeeded for a TTL, and by then every key is back.
func TestNoLossAfterJetStreamOutage(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	a := join(t, open(t, srv, jsstore.Options{}), "a")
	b := join(t, open(t, srv, jsstore.Options{}), "b")
	evA, evB := watch(t, a), watch(t, b)
	waitGuardOpen(t, a)
	waitGuardOpen(t, b)
	srv.Stop()
	waitFor(t, "a TTL without a good beat", func() bool {
		return time.Since(a.LastBeat()) > jsstore.NodeTTL && time.Since(b.LastBeat()) > jsstore.NodeTTL
	})
	srv.Start()
	waitGuardOpen(t, a)
	waitGuardOpen(t, b)
	sa, sb := a.Sweeps(), b.Sweeps()
	waitFor(t, "a sweep with the guard open", func() bool { return a.Sweeps() > sa+1 && b.Sweeps() > sb+1 })
	if n := evA.count(store.NodeLost) + evB.count(store.NodeLost); n != 0 {
		e, _, _ := evA.find(store.NodeLost, "b", "")
		t.Fatalf("%d losses declared after an outage of JetStream itself (%+v)", n, e)
	}
	if len(a.Nodes()) != 2 || len(b.Nodes()) != 2 {
		t.Fatalf("nodes after the outage: %+v / %+v", a.Nodes(), b.Nodes())
	}
}

// TestDisplaced: when another incarnation holds this node's key (written behind its back), the next beat
// finds out: Displaced is closed and the node stops beating, so the key stays the other's.
func TestDisplaced(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	a := join(t, open(t, srv, jsstore.Options{}), "a")
	js, err := jetstream.New(srv.Connect())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctxT(t), "acpgw-nodes")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := json.Marshal(store.NodeInfo{ID: "a", Incarnation: "someone-else"})
	if _, err := kv.Put(ctxT(t), "a", other); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Displaced():
	case <-ctxT(t).Done():
		t.Fatal("not displaced")
	}
	e, err := kv.Get(ctxT(t), "a")
	if err != nil || string(e.Value()) != string(other) {
		t.Fatalf("key after displacement: %v %s", err, e.Value())
	}
}
