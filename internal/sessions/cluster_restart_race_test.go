package sessions_test

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// A restart that races the takeover of its previous process (docs/cluster.md §6, fast restart): the survivor's
// takeover lands at the moment the restarted node claims the same entry, through hooks on the restarted
// node's directory, so each interleaving runs every time.

// claimRaceDir runs a hook before this node's first claim of an entry (an Update naming it closer) and
// before its n-th read of an entry.
type claimRaceDir struct {
	store.Directory
	self string

	mu          sync.Mutex
	beforeClaim map[string]func() // by session id; run once
	beforeGet   map[string]func() // by session id; run once, at the read getAt names
	getAt       map[string]int
	gets        map[string]int
}

func (d *claimRaceDir) Update(ctx context.Context, e store.DirEntry, rev uint64) (uint64, error) {
	d.mu.Lock()
	hook := d.beforeClaim[e.ID]
	if e.Closer == d.self {
		delete(d.beforeClaim, e.ID)
	} else {
		hook = nil
	}
	d.mu.Unlock()
	if hook != nil {
		hook()
	}
	return d.Directory.Update(ctx, e, rev)
}

func (d *claimRaceDir) Get(ctx context.Context, sid string) (store.DirEntry, uint64, error) {
	d.mu.Lock()
	d.gets[sid]++
	hook := d.beforeGet[sid]
	if d.gets[sid] == d.getAt[sid] {
		delete(d.beforeGet, sid)
	} else {
		hook = nil
	}
	d.mu.Unlock()
	if hook != nil {
		hook()
	}
	return d.Directory.Get(ctx, sid)
}

type claimRaceStore struct {
	store.Store
	dir *claimRaceDir
}

func (s *claimRaceStore) Dir() store.Directory { return s.dir }

// TestRestartRacesTakeover: node a is killed with two sessions open; it comes back with the same id while
// survivor b takes them over. b's whole takeover lands just before a's claim of the first (a's claim loses),
// and b has claimed the second (its takeover in progress) when a tries. Both end detached "node returned" on
// a, after b's node_lost closing frames. Before, a's Recover gave up on both: they stayed failed/node_lost
// and a answered 404 for them.
func TestRestartRacesTakeover(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	linkA := &cuttable{srv: srv}
	a := newClusterNodeConn(t, srv.Connect(nats.InProcessServer(linkA)), workdir, "a")
	t.Cleanup(func() { linkA.set(false) }) // before a stops, even when the test ends early
	inTurn, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inTurn.PromptAs(alice, prompt("refactor the parser")); err != nil {
		t.Fatal(err)
	}
	idle, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*sessions.Session{inTurn, idle} {
		eventually(t, "a's frames stored", func() bool {
			v := s.View()
			return (s != inTurn || len(v.PendingPermissions) == 1) && v.DurableSeq != nil && *v.DurableSeq == s.Log().Head() && s.Log().Head() > 0
		})
	}
	heads := map[string]uint64{inTurn.ID: inTurn.Log().Head(), idle.ID: idle.Log().Head()}

	// a dies: cut off (nothing of it reaches the store again), and its key goes as its expiry would.
	linkA.set(true)
	if err := a.nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	deleteNodeKey(ctx, t, srv, "a")

	// b, a survivor, takes the sessions over when the hooks say (its own node watch is not running).
	b := survivor(t, srv, workdir, "b")
	takeOver := func(sid string) func() {
		return func() {
			e, rev, err := b.st.Dir().Get(ctx, sid)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := b.reg.TakeOver(ctx, e, rev); err != nil {
				t.Errorf("b's takeover of %s: %v", sid, err)
			}
		}
	}
	claimOnly := func(sid string) func() {
		return func() {
			e, rev, err := b.st.Dir().Get(ctx, sid)
			if err != nil {
				t.Error(err)
				return
			}
			e.Closer, e.Status, e.Reason, e.Incarnation = "b", store.StatusFailed, sessions.ReasonNodeLost, ""
			if _, err := b.st.Dir().Update(ctx, e, rev); err != nil {
				t.Errorf("b's claim of %s: %v", sid, err)
			}
		}
	}
	dir := &claimRaceDir{self: "a",
		beforeClaim: map[string]func(){inTurn.ID: takeOver(inTurn.ID), idle.ID: claimOnly(idle.ID)},
		// a reads the idle session again after its lost claim (b's claim is there), then, waiting, again: b
		// ends its takeover before that second read.
		beforeGet: map[string]func(){idle.ID: takeOver(idle.ID)},
		getAt:     map[string]int{idle.ID: 2},
		gets:      map[string]int{},
	}
	a2 := newClusterNodeWith(t, srv, workdir, "a", func(st store.Store) store.Store {
		dir.Directory = st.Dir()
		return &claimRaceStore{Store: st, dir: dir}
	})

	for _, sid := range []string{inTurn.ID, idle.ID} {
		s, err := a2.reg.GetAs(alice, sid)
		if err != nil {
			t.Fatalf("session %s on the restarted a: %v", sid, err)
		}
		if v := s.View(); v.Status != store.StatusDetached || v.StatusReason != "node returned" {
			t.Fatalf("session %s on the restarted a: %s %q", sid, v.Status, v.StatusReason)
		}
		// The stored log: a's frames, b's node_lost closing frames (a new epoch), then a's detached status.
		stored := storedFrames(t, a2, sid)
		h := heads[sid]
		var statuses []string
		for _, fr := range stored[h:] {
			if f := facts(t, fr.Frame); f.Method == "_gateway/session_status" {
				statuses = append(statuses, f.Params.Status+"/"+f.Params.Reason)
			}
		}
		if len(statuses) != 2 || statuses[0] != "failed/node_lost" || statuses[1] != "detached/node returned" {
			t.Fatalf("session %s: status frames after the head %d: %v", sid, h, statuses)
		}
		e, _, err := a2.st.Dir().Get(ctx, sid)
		if err != nil || e.Owner != "a" || e.Closer != "" || !e.Clean || e.Status != store.StatusDetached || e.Incarnation != a2.cluster.Self().Incarnation {
			t.Fatalf("session %s: entry %+v, %v", sid, e, err)
		}
	}
	if dir.gets[idle.ID] < 2 {
		t.Fatalf("a read the idle session's entry %d times: it did not wait for b's takeover", dir.gets[idle.ID])
	}

	linkA.set(false) // the old a comes back, finds its id taken and stands its sessions down, so it can stop
	eventually(t, "the old a to stand its sessions down", func() bool {
		got, err := a.reg.Get(inTurn.ID)
		return err == nil && got != inTurn
	})
}

// deleteNodeKey removes node's key from the nodes bucket, as its expiry would.
func deleteNodeKey(ctx context.Context, t *testing.T, srv *natstest.Server, node string) {
	t.Helper()
	nc := srv.Connect()
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "acpgw-nodes")
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, node); err != nil {
		t.Fatal(err)
	}
}

// survivorNode is a registry on the store that runs no node watch: the test says when it takes over.
type survivorNode struct {
	reg *sessions.Registry
	st  *jsstore.Store
}

func survivor(t *testing.T, srv *natstest.Server, workdir, id string) *survivorNode {
	t.Helper()
	nc := srv.Connect()
	t.Cleanup(nc.Close)
	js, err := jsstore.Open(context.Background(), nc, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	demoSpec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	r, err := sessions.NewRegistry(sessions.Config{Workdir: workdir, Logger: testLogger(id), Store: js, NodeID: id}, []agents.Spec{demoSpec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdownRegistry(t, r) })
	return &survivorNode{reg: r, st: js}
}
