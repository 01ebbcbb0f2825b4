package sessions_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// Mode c with two registries on one embedded JetStream server (docs/cluster.md §5): node b serves node a's
// sessions from a follower cache, byte for byte, and its commands reach a with the same answers and errors.

type clusterNode struct {
	reg     *sessions.Registry
	cluster *jsstore.Cluster
	st      *jsstore.Store
	nc      *nats.Conn
	cancel  context.CancelFunc
	stopped bool
}

func (n *clusterNode) stop(t *testing.T) {
	t.Helper()
	if n.stopped {
		return
	}
	n.stopped = true
	shutdownRegistry(t, n.reg)
	n.cancel()
	n.cluster.Close()
}

func newClusterNode(t *testing.T, srv *natstest.Server, workdir, id string) *clusterNode {
	return newClusterNodeWith(t, srv, workdir, id, nil)
}

// newClusterNodeWith is newClusterNode with the registry's store wrapped by wrap (nil = none).
func newClusterNodeWith(t *testing.T, srv *natstest.Server, workdir, id string, wrap func(store.Store) store.Store) *clusterNode {
	t.Helper()
	return newClusterNodeConnWith(t, srv.Connect(), workdir, id, wrap)
}

// newClusterNodeConn starts node id on nc: it joins, recovers its stored sessions and runs its part of the
// cluster.
func newClusterNodeConn(t *testing.T, nc *nats.Conn, workdir, id string) *clusterNode {
	return newClusterNodeConnWith(t, nc, workdir, id, nil)
}

func newClusterNodeConnWith(t *testing.T, nc *nats.Conn, workdir, id string, wrap func(store.Store) store.Store) *clusterNode {
	t.Helper()
	return newClusterNodeConfig(t, nc, workdir, id, wrap, nil)
}

// newClusterNodeConfig is newClusterNodeConnWith with the registry's configuration changed by edit (nil =
// none) before the registry is made.
func newClusterNodeConfig(t *testing.T, nc *nats.Conn, workdir, id string, wrap func(store.Store) store.Store, edit func(*sessions.Config)) *clusterNode {
	t.Helper()
	js, err := jsstore.Open(context.Background(), nc, jsstore.Options{Fence: true}) // as a node of a cluster opens it
	if err != nil {
		t.Fatal(err)
	}
	var st store.Store = js
	if wrap != nil {
		st = wrap(js)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := js.Join(ctx, jsstore.ClusterOptions{Node: id, Agents: []string{"demo"}})
	if err != nil {
		t.Fatal(err)
	}
	demoSpec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	cfg := sessions.Config{
		Workdir: workdir, Logger: testLogger(id), StopGrace: 200 * time.Millisecond,
		Store: st, NodeID: id, Cluster: c, DetachIdle: true, DetachOnShutdown: true,
	}
	if edit != nil {
		edit(&cfg)
	}
	r, err := sessions.NewRegistry(cfg, []agents.Spec{demoSpec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	if err := r.RunCluster(rctx); err != nil {
		t.Fatal(err)
	}
	n := &clusterNode{reg: r, cluster: c, st: js, nc: nc, cancel: rcancel}
	t.Cleanup(func() { n.stop(t) })
	return n
}

// newCluster starts nodes "a" and "b" on one embedded server.
func newCluster(t *testing.T) (a, b *clusterNode) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	return newClusterNode(t, srv, workdir, "a"), newClusterNode(t, srv, workdir, "b")
}

// eventually polls cond every 10 ms for at most 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func allowOnce() ask.ClientAnswer {
	var a ask.ClientAnswer
	a.Outcome.Outcome, a.Outcome.OptionID = "selected", "allow-once"
	return a
}

func TestFollowerServesAndRoutes(t *testing.T) {
	a, b := newCluster(t)
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatalf("node b: %v", err)
	}
	if f == s {
		t.Fatal("node b returned node a's own session")
	}
	if v := f.View(); v.Node != "a" || v.ID != s.ID || v.Agent != "demo" {
		t.Fatalf("follower view %+v", v)
	}
	if v := s.View(); v.Node != "a" {
		t.Fatalf("owner view says node %q", v.Node)
	}
	eventually(t, "the follower idle", func() bool { return f.Status() == store.StatusIdle })
	if _, err := b.reg.GetAs(bob, s.ID); !errors.Is(err, sessionerr.ErrNotFound) {
		t.Fatalf("a stranger on node b got %v", err)
	}

	// A full turn through node b: it waits for a permission, which node b answers.
	turn, err := f.PromptAs(alice, prompt("refactor the parser"))
	if err != nil {
		t.Fatalf("prompt through b: %v", err)
	}
	if cur := s.CurrentTurn(); cur == nil || cur.ID != turn.ID {
		t.Fatalf("node a runs turn %v, node b returned %s", cur, turn.ID)
	}
	if _, err := f.PromptAs(alice, prompt("quick")); !errors.Is(err, sessionerr.ErrTurnRunning) {
		t.Fatalf("a second prompt through b: %v, want turn_running", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := f.AwaitTurn(ctx, turn)
	if err != nil || st.Status != sessions.TurnAwaitingPermission || len(st.Permissions) != 1 {
		t.Fatalf("await on b: %+v, %v", st, err)
	}
	if _, _, err := f.AnswerInTurnAs(alice, "no-such-permission", allowOnce(), "rest"); !errors.Is(err, sessionerr.ErrPermissionUnknown) {
		t.Fatalf("unknown permission through b: %v", err)
	}
	o, t2, err := f.AnswerInTurnAs(alice, st.Permissions[0].ID, allowOnce(), "rest")
	if err != nil || !o.Allowed || t2 == nil || t2.ID != turn.ID {
		t.Fatalf("answer through b: %+v, %v, %v", o, t2, err)
	}
	if _, _, err := f.AnswerInTurnAs(alice, st.Permissions[0].ID, allowOnce(), "rest"); !errors.Is(err, sessionerr.ErrAlreadyResolved) {
		t.Fatalf("second answer through b: %v, want already_resolved", err)
	}
	st, err = f.AwaitTurn(ctx, turn)
	if err != nil || st.Status != sessions.TurnEnded || st.StopReason != "end_turn" || st.Text == "" {
		t.Fatalf("turn on b: %+v, %v", st, err)
	}
	lt, _ := s.LatestTurn()
	if want := s.TurnState(lt); st.Text != want.Text {
		t.Fatalf("turn text on b %q, on a %q", st.Text, want.Text)
	}
	if _, err := f.CancelAs(ctx, alice); !errors.Is(err, sessionerr.ErrNoTurn) {
		t.Fatalf("cancel without a turn through b: %v", err)
	}

	// The follower's log is the owner's, byte for byte, and so are the snapshots.
	eventually(t, "b's log at a's head", func() bool { return f.Log().Head() == s.Log().Head() })
	sameFrames(t, frames(t, f.Log()), frames(t, s.Log()))
	if fd, sd := f.Detail(), s.Detail(); string(fd.Snapshot) != string(sd.Snapshot) || fd.LastSeq != sd.LastSeq {
		t.Fatalf("snapshots differ at %d/%d", fd.LastSeq, sd.LastSeq)
	}

	// Mode changes and shares go to the owner and are visible on both.
	if err := f.SetModeAs(ctx, alice, "plan"); err != nil {
		t.Fatalf("set_mode through b: %v", err)
	}
	if err := f.SetModeAs(ctx, alice, "nope"); err == nil {
		t.Fatal("an unknown mode through b was accepted")
	}
	if err := f.ShareAs(alice, bob.ID, store.ShareViewer); err != nil {
		t.Fatal(err)
	}
	if !s.VisibleTo(bob) {
		t.Fatal("the share through b did not reach a")
	}
	fb, err := b.reg.GetAs(bob, s.ID)
	if err != nil {
		t.Fatalf("bob after the share: %v", err)
	}
	if _, err := fb.PromptAs(bob, prompt("quick")); !errors.Is(err, sessionerr.ErrForbidden) {
		t.Fatalf("a viewer's prompt through b: %v, want forbidden", err)
	}
	if len(b.reg.ListAs(bob)) != 1 || len(a.reg.ListAs(bob)) != 1 {
		t.Fatal("bob does not list the shared session on both nodes")
	}

	// Closing through b closes it on a; both forget it.
	if err := f.CloseAs(alice, "done"); err != nil {
		t.Fatalf("close through b: %v", err)
	}
	select {
	case <-s.Closed():
	default:
		t.Fatal("the owner's session is still open")
	}
	select {
	case <-f.Closed():
	case <-ctx.Done():
		t.Fatal("the follower did not close")
	}
	if _, err := b.reg.GetAs(alice, s.ID); !errors.Is(err, sessionerr.ErrNotFound) {
		t.Fatalf("node b after the close: %v", err)
	}
}

func TestCreateOnAnotherNode(t *testing.T) {
	a, b := newCluster(t)
	eventually(t, "b to see a", func() bool { return len(b.cluster.Nodes()) == 2 })
	f, err := b.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice, Node: "a"})
	if err != nil {
		t.Fatalf("create on a through b: %v", err)
	}
	if v := f.View(); v.Node != "a" || v.Status != store.StatusIdle {
		t.Fatalf("view through b: node %q status %q", v.Node, v.Status)
	}
	s, err := a.reg.GetAs(alice, f.ID)
	if err != nil || s.View().Node != "a" {
		t.Fatalf("node a does not own it: %v", err)
	}
	if len(a.reg.ListAs(alice)) != 1 {
		t.Fatal("node a lists no session")
	}
	eventually(t, "node b to list node a's session", func() bool { return len(b.reg.ListAs(alice)) == 1 })
	if _, err := b.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice, Node: "zz"}); !errors.Is(err, sessionerr.ErrUnknownNode) {
		t.Fatalf("create on an unknown node: %v", err)
	}
	if _, err := b.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice, Node: "a", Agent: "nope"}); !errors.Is(err, sessionerr.ErrUnknownAgent) {
		t.Fatalf("create with an unknown agent on a: %v", err)
	}
	turn, err := f.PromptAs(alice, prompt("quick"))
	if err != nil {
		t.Fatal(err)
	}
	if res := turn.Result(); res.StopReason != "end_turn" || res.Err != nil {
		t.Fatalf("quick turn through b: %+v", res)
	}

	// With node a gone, node b answers owner_unavailable, and reads still work from the store.
	a.stop(t)
	if _, err := f.PromptAs(alice, prompt("quick")); !errors.Is(err, store.ErrOwnerUnavailable) {
		t.Fatalf("prompt with the owner gone: %v", err)
	}
	if f.Detail().LastSeq == 0 {
		t.Fatal("the follower lost its log")
	}
}

// TestFollowerListsFromDirectory: a session created on a shows on b's list without being loaded, and ends there
// when a closes it.
func TestFollowerListsFromDirectory(t *testing.T) {
	a, b := newCluster(t)
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "b to list a's session", func() bool {
		l := b.reg.ListAs(alice)
		return len(l) == 1 && l[0].ID == s.ID && l[0].View().Status == store.StatusIdle
	})
	if len(b.reg.ListAs(principal.Principal{ID: "eve", Role: principal.RoleUser})) != 0 {
		t.Fatal("a stranger lists a's session on b")
	}
	s.Close("bye")
	eventually(t, "b to forget the closed session", func() bool { return len(b.reg.ListAs(alice)) == 0 })
}

// gatedStore holds back the frames a follower's feed delivers past seq `open` until release is closed.
type gatedStore struct {
	store.Store
	open    uint64
	release chan struct{}
}

func (g *gatedStore) Follow(ctx context.Context, sid string, fn func(store.StoredFrame) error, caughtUp func()) error {
	return g.Store.Follow(ctx, sid, func(f store.StoredFrame) error {
		if f.Seq > g.open {
			select {
			case <-g.release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return fn(f)
	}, caughtUp)
}

// TestFollowerResumeAheadOfItsCopy: a client that read up to the owner's head resumes on a follower whose copy
// is behind: the follower waits for its copy instead of answering invalid_cursor (it did).
func TestFollowerResumeAheadOfItsCopy(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	a := newClusterNode(t, srv, workdir, "a")
	gate := &gatedStore{release: make(chan struct{})}
	b := newClusterNodeWith(t, srv, workdir, "b", func(st store.Store) store.Store { gate.Store = st; return gate })
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	// seq 1 is session_ready, 2 the demo's commands update: the copy loads both before the gate holds frames.
	eventually(t, "the demo's first update", func() bool { return s.Log().Head() >= 2 })
	gate.open = s.Log().Head()
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, alice, "quick")
	head := s.Log().Head()
	if f.Log().Head() >= head {
		t.Fatalf("the gate let frames through: follower at %d, owner at %d", f.Log().Head(), head)
	}
	// Released a moment later: with the wait it passes whenever the release comes; without it, StartAt answers
	// before the release.
	time.AfterFunc(100*time.Millisecond, func() { close(gate.release) })
	st := f.StartAt(head, true, s.Epoch)
	if st.Resync != "" || st.Cursor != head {
		t.Fatalf("resume at the owner's head %d on a follower behind: %+v", head, st)
	}
}

// testLogger discards, unless GATEWAY_TEST_LOG is set: then node id logs to stderr.
func testLogger(id string) *slog.Logger {
	if os.Getenv("GATEWAY_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("node", id)
}

// holdAfterStore passes a follower's frames up to and including the first one that matches, then holds the rest
// until release is closed.
type holdAfterStore struct {
	store.Store
	match   func(frame []byte) bool
	release chan struct{}
	held    chan struct{} // closed when the matching frame has been passed on
	once    sync.Once
}

func (h *holdAfterStore) Follow(ctx context.Context, sid string, fn func(store.StoredFrame) error, caughtUp func()) error {
	passed := false
	return h.Store.Follow(ctx, sid, func(f store.StoredFrame) error {
		if passed {
			select {
			case <-h.release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := fn(f)
		if !passed && h.match(f.Frame) {
			passed = true
			h.once.Do(func() { close(h.held) })
		}
		return err
	}, caughtUp)
}

// TestFollowerPolicyAnswerIsNeverPending: a permission request the owner's policy answers at once is never
// pending on a follower, even while its permission_resolved frame has not arrived there. A REST waiter on the
// follower returned awaiting_permission (the chaos test across nodes found it).
func TestFollowerPolicyAnswerIsNeverPending(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	a := newClusterNode(t, srv, workdir, "a")
	hold := &holdAfterStore{release: make(chan struct{}), held: make(chan struct{}),
		match: func(f []byte) bool { return strings.Contains(string(f), `"method":"session/request_permission"`) }}
	b := newClusterNodeWith(t, srv, workdir, "b", func(st store.Store) store.Store { hold.Store = st; return hold })
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice, PermissionPolicy: sessions.PolicyApproveAll})
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := f.PromptAs(alice, prompt("refactor the parser"))
	if err != nil {
		t.Fatal(err)
	}
	<-hold.held // the request is on b, its answer is held back
	if p := f.PendingPermissions(); len(p) != 0 {
		t.Fatalf("a request the policy answered is pending on the follower: %+v", p)
	}
	if st := f.TurnState(turn); st.Status != sessions.TurnRunning {
		t.Fatalf("turn on the follower: %+v", st)
	}
	close(hold.release)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if st, err := f.AwaitTurn(ctx, turn); err != nil || st.Status != sessions.TurnEnded || st.StopReason != "end_turn" {
		t.Fatalf("the turn through b: %+v, %v", st, err)
	}
}

// TestIdleFollowerPausesItsFeed: a follower nobody used for the idle TTL stops its consumer (the store serves
// one fewer) and lists as before; its next use feeds it again, with what the owner logged meanwhile.
func TestIdleFollowerPausesItsFeed(t *testing.T) {
	a, b := newCluster(t)
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, alice, "quick")
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's copy at a's head", func() bool { return f.Log().Head() == s.Log().Head() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	js, err := jetstream.New(b.nc)
	if err != nil {
		t.Fatal(err)
	}
	consumers := func() int {
		st, err := js.Stream(ctx, "acpgw-log")
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Consumers
	}
	before := consumers()
	if n := b.reg.PauseIdleFollowersAt(time.Now().Add(-time.Hour)); n != 0 {
		t.Fatalf("paused %d followers used within the TTL", n)
	}
	if n := b.reg.PauseIdleFollowersAt(time.Now().Add(time.Hour)); n != 1 {
		t.Fatalf("paused %d idle followers, want 1", n)
	}
	eventually(t, "the paused follower's consumer gone", func() bool { return consumers() == before-1 })
	if v := f.View(); v.LastSeq != s.Log().Head() || v.Status != store.StatusIdle {
		t.Fatalf("the paused follower lists %+v", v)
	}

	runTurn(t, s, alice, "quick")
	again, err := b.reg.GetAs(alice, s.ID)
	if err != nil || again != f {
		t.Fatalf("the next use: %v (same follower %v)", err, again == f)
	}
	eventually(t, "the resumed copy at a's head", func() bool { return f.Log().Head() == s.Log().Head() })
	sameFrames(t, frames(t, f.Log()), frames(t, s.Log()))
}
