package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// Node loss and return (docs/cluster.md §5) with three registries on one embedded JetStream server. Node a is
// cut off from NATS (its connection drops and cannot come back until the test heals it), so it goes on
// running its agent unobserved, as an isolated node does.

// cuttable is an in-process connection provider the test can cut: while cut, every dial fails.
type cuttable struct {
	srv *natstest.Server
	mu  sync.Mutex
	off bool
}

func (c *cuttable) InProcessConn() (net.Conn, error) {
	c.mu.Lock()
	off := c.off
	c.mu.Unlock()
	if off {
		return nil, errors.New("cut off")
	}
	return c.srv.InProcessConn()
}

func (c *cuttable) set(off bool) {
	c.mu.Lock()
	c.off = off
	c.mu.Unlock()
}

// nullSink is a subscriber that reads everything and keeps nothing.
type nullSink struct{}

func (nullSink) Frame(uint64, []byte) error { return nil }
func (nullSink) Note(string, any) error     { return nil }
func (nullSink) Wait(wake <-chan struct{}) error {
	<-wake
	return nil
}

// frameFacts is what the test reads of a logged frame.
type frameFacts struct {
	Method string `json:"method"`
	Params struct {
		By     string `json:"by"`
		Status string `json:"status"`
		Reason string `json:"reason"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
		StopReason string `json:"stopReason"`
		Outcome    string `json:"turnOutcome"`
		Meta       struct {
			Gateway struct {
				Seq   uint64 `json:"seq"`
				Epoch string `json:"epoch"`
			} `json:"gateway"`
		} `json:"_meta"`
	} `json:"params"`
}

func facts(t *testing.T, frame []byte) frameFacts {
	t.Helper()
	var f frameFacts
	if err := json.Unmarshal(frame, &f); err != nil {
		t.Fatalf("frame %s: %v", frame, err)
	}
	return f
}

// storedFrames reads the session's log as the store holds it (the reader rule applied).
func storedFrames(t *testing.T, n *clusterNode, sid string) []eventlog.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []eventlog.Entry
	if _, err := n.st.Feed(ctx, sid, false, func(f store.StoredFrame) error {
		out = append(out, eventlog.Entry{Seq: f.Seq, Frame: f.Frame})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNodeLossTakeoverStandDownAndReturn(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a heartbeat to expire")
	}
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	link := &cuttable{srv: srv}
	a := newClusterNodeConn(t, srv.Connect(nats.InProcessServer(link)), workdir, "a")
	b := newClusterNode(t, srv, workdir, "b")
	c := newClusterNode(t, srv, workdir, "c")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// A detached session of a has nothing open: the loss leaves it detached.
	idle, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.reg.Detach(idle.ID, "test"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the detached entry clean", func() bool {
		e, _, err := b.st.Dir().Get(ctx, idle.ID)
		return err == nil && e.Status == store.StatusDetached && e.Clean
	})
	idleEntry, idleRev, err := b.st.Dir().Get(ctx, idle.ID)
	if err != nil {
		t.Fatal(err)
	}

	// A turn on a waits for a permission; b and c follow it.
	s, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.PromptAs(alice, prompt("refactor the parser"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's permission request", func() bool { return len(s.PendingPermissions()) == 1 })
	permID := s.PendingPermissions()[0].ID
	var followers []*sessions.Session
	for _, n := range []*clusterNode{b, c} {
		f, err := n.reg.GetAs(alice, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		followers = append(followers, f)
	}
	eventually(t, "the followers at a's head with the request", func() bool {
		head := s.Log().Head()
		for _, f := range followers {
			if f.Log().Head() != head || len(f.PendingPermissions()) != 1 {
				return false
			}
		}
		v := s.View()
		return v.DurableSeq != nil && *v.DurableSeq == head
	})
	h, old := s.Log().Head(), s.Epoch
	before := frames(t, s.Log())
	subDone := make(chan error, 1)
	go func() { subDone <- s.Follow(s.StartAt(0, false, ""), nullSink{}, eventlog.FollowLimits{}) }()

	// a is cut off. Its client still answers the permission there: the turn goes on on a, unstored.
	link.set(true)
	if err := a.nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	cutAt := time.Now()
	if _, _, err := s.AnswerInTurnAs(alice, permID, allowOnce(), "rest"); err != nil {
		t.Fatalf("answer on the cut-off owner: %v", err)
	}

	// Within 10 s of a's last beat, b or c (exactly one) has failed the session: the entry and the log.
	var entry store.DirEntry
	var rev uint64
	deadline := time.Now().Add(20 * time.Second)
	for {
		e, r, err := b.st.Dir().Get(ctx, s.ID)
		if err == nil && e.Status == store.StatusFailed && e.Reason == sessions.ReasonNodeLost && e.Closer == "" {
			entry, rev = e, r
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no takeover: entry %+v, %v", e, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	declared := time.Now()
	lastBeat := a.cluster.LastBeat()
	t.Logf("node loss declared (failed entry) %v after a's last beat, %v after its connection was cut",
		declared.Sub(lastBeat).Round(time.Millisecond), declared.Sub(cutAt).Round(time.Millisecond))
	if d := declared.Sub(lastBeat); d > 10*time.Second {
		t.Fatalf("node loss declared %v after the owner's last beat", d)
	}
	if entry.Owner != "a" || entry.Incarnation != "" || !entry.Clean || entry.Epoch == old || entry.Epoch == "" {
		t.Fatalf("entry after the takeover: %+v", entry)
	}

	// The store holds the log up to H as it was, then one set of closing frames in one new epoch.
	stored := storedFrames(t, b, s.ID)
	sameFrames(t, stored[:len(before)], before)
	closing := stored[len(before):]
	if len(closing) == 0 || closing[0].Seq != h+1 {
		t.Fatalf("closing frames %v start after %d", closing, h)
	}
	count := map[string]int{}
	for _, fr := range closing {
		f := facts(t, fr.Frame)
		if f.Params.Meta.Gateway.Epoch != entry.Epoch {
			t.Fatalf("closing frame in epoch %q, the entry's is %q: %s", f.Params.Meta.Gateway.Epoch, entry.Epoch, fr.Frame)
		}
		switch f.Method {
		case "_gateway/permission_resolved":
			if f.Params.By != sessions.ReasonNodeLost {
				t.Fatalf("permission resolved by %q", f.Params.By)
			}
		case "_gateway/turn_ended":
			if f.Params.Error == nil || f.Params.Error.Message != "node lost" || f.Params.StopReason != "error" || f.Params.Outcome != "failed" {
				t.Fatalf("turn ended: %s", fr.Frame)
			}
		case "_gateway/session_status":
			if f.Params.Status != "failed" || f.Params.Reason != sessions.ReasonNodeLost {
				t.Fatalf("status: %s", fr.Frame)
			}
		case "session/update":
		default:
			t.Fatalf("unexpected closing frame %s", fr.Frame)
		}
		count[f.Method]++
	}
	for _, m := range []string{"_gateway/permission_resolved", "_gateway/turn_ended", "_gateway/session_status"} {
		if count[m] != 1 {
			t.Fatalf("%d %s frames in the closing set %v", count[m], m, count)
		}
	}
	h2 := stored[len(stored)-1].Seq

	// Both followers show it, and resume across the fork as after a restart.
	for i, f := range followers {
		eventually(t, "the follower failed", func() bool {
			v := f.View()
			return f.Log().Head() == h2 && v.Status == store.StatusFailed && v.StatusReason == sessions.ReasonNodeLost &&
				len(v.PendingPermissions) == 0 && v.CurrentTurn == nil
		})
		sameFrames(t, frames(t, f.Log()), stored)
		v := f.View()
		if v.LastTurn == nil || v.LastTurn.Error == nil || v.LastTurn.TurnID != turn.ID || v.LastTurn.StopReason != "error" || v.LastTurn.Outcome != "failed" || v.Epoch != entry.Epoch || f.CurrentEpoch() != entry.Epoch {
			t.Fatalf("follower %d: %+v", i, v)
		}
		// What REST's turn wait and `/acp`'s session/prompt answer from: a failure (502 turn_failed, a JSON-RPC error).
		if lt, err := f.LatestTurn(); err != nil || lt.ID != turn.ID {
			t.Fatalf("follower %d: latest turn %v, %v", i, lt, err)
		} else if st := f.TurnState(lt); st.Status != sessions.TurnEnded || st.StopReason != "error" || st.Outcome != "failed" || st.Err == nil {
			t.Fatalf("follower %d: the turn the node loss ended: %+v", i, st)
		}
		if st := f.StartAt(h, true, old); st.Resync != "" {
			t.Fatalf("old epoch at H: resync %q", st.Resync)
		}
		if st := f.StartAt(h+1, true, old); st.Resync != "epoch_changed" {
			t.Fatalf("old epoch past H: %q, want epoch_changed", st.Resync)
		}
		// Answered here, not routed to the lost owner.
		if _, err := f.PromptAs(alice, prompt("quick")); !errors.Is(err, sessionerr.ErrFailed) {
			t.Fatalf("prompt through a follower: %v", err)
		}
		if _, err := f.CancelAs(ctx, alice); !errors.Is(err, sessionerr.ErrFailed) {
			t.Fatalf("cancel through a follower: %v", err)
		}
		if _, _, err := f.AnswerInTurnAs(alice, permID, allowOnce(), "rest"); !errors.Is(err, sessionerr.ErrFailed) {
			t.Fatalf("answer through a follower: %v", err)
		}
	}

	// The detached session was not taken over: it is readable, and its prompts find no owner.
	if e, r, err := b.st.Dir().Get(ctx, idle.ID); err != nil || r != idleRev || e.Status != store.StatusDetached || e.Incarnation != idleEntry.Incarnation {
		t.Fatalf("the detached session's entry after the loss: %+v rev %d (was %d), %v", e, r, idleRev, err)
	}
	fi, err := c.reg.GetAs(alice, idle.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Status() != store.StatusDetached || fi.Log().Head() == 0 {
		t.Fatalf("the detached session on c: %s at %d", fi.Status(), fi.Log().Head())
	}
	if _, err := fi.PromptAs(alice, prompt("quick")); !errors.Is(err, store.ErrOwnerUnavailable) {
		t.Fatalf("prompt of the detached session with its node gone: %v", err)
	}

	// A late frame of the old epoch lands after the fork: every reader drops it.
	late := eventlog.NewLog(eventlog.LogLimits{})
	lateFrame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"late"}},"_meta":{"gateway":{"seq":` +
		itoa(h2+1) + `,"epoch":"` + old + `"}}}}`)
	if err := late.Put(h2+1, eventlog.KindUpdate, lateFrame); err != nil {
		t.Fatal(err)
	}
	p := b.st.Persist(s.ID, old, late, h2)
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	if got := storedFrames(t, b, s.ID); len(got) != len(stored) {
		t.Fatalf("the store's reader kept the late frame: %d frames, want %d", len(got), len(stored))
	}

	// a comes back: it finds its session taken over and stands it down, without writing the entry.
	link.set(false)
	select {
	case err := <-subDone:
		if !errors.Is(err, sessionerr.ErrStoodDown) || !errors.Is(err, sessionerr.ErrShutdown) {
			t.Fatalf("a's subscriber ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("a did not stand its session down")
	}
	<-s.Closed()
	if v := s.View(); v.Status != store.StatusFailed || v.StatusReason != sessions.ReasonNodeLost {
		t.Fatalf("a's stood-down session: %s %s", v.Status, v.StatusReason)
	}
	var back *sessions.Session
	eventually(t, "a to list the session from the store", func() bool {
		back, err = a.reg.Get(s.ID)
		return err == nil && back != s
	})
	sameFrames(t, frames(t, back.Log()), stored) // a reader of the stored log: the late frame is not in it
	if e, r, err := b.st.Dir().Get(ctx, s.ID); err != nil || r != rev || e.Status != store.StatusFailed {
		t.Fatalf("the entry after a came back: %+v rev %d (was %d), %v", e, r, rev, err)
	}
	if _, err := a.reg.GetAs(alice, s.ID); err != nil {
		t.Fatal(err)
	}

	// a restarts (a new process with the same id): the session is detached there, and a prompt through b
	// re-attaches it.
	a.stop(t)
	a2 := newClusterNode(t, srv, workdir, "a")
	for _, f := range followers {
		eventually(t, "the follower detached", func() bool {
			v := f.View()
			return f.Log().Head() == h2+1 && v.Status == store.StatusDetached && v.StatusReason == "node returned"
		})
		all := frames(t, f.Log())
		if ff := facts(t, all[len(all)-1].Frame); ff.Method != "_gateway/session_status" || ff.Params.Meta.Gateway.Epoch != entry.Epoch {
			t.Fatalf("last frame %s", all[len(all)-1].Frame)
		}
	}
	e, _, err := a2.st.Dir().Get(ctx, s.ID)
	if err != nil || e.Status != store.StatusDetached || e.Owner != "a" || e.Incarnation != a2.cluster.Self().Incarnation || !e.Clean {
		t.Fatalf("entry after the node's return: %+v, %v", e, err)
	}
	t2, err := followers[0].PromptAs(alice, prompt("quick"))
	if err != nil {
		t.Fatalf("prompt after the return: %v", err)
	}
	select {
	case <-t2.Done():
	case <-ctx.Done():
		t.Fatal("the re-attached turn did not end")
	}
	if res := t2.Result(); res.StopReason != "end_turn" || res.Err != nil {
		t.Fatalf("turn after the return: %+v", res)
	}
	owned, err := a2.reg.Get(s.ID)
	if err != nil || owned.Status() != store.StatusIdle || owned.CurrentEpoch() != entry.Epoch {
		t.Fatalf("a2's session: %v", err)
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestNodeLossRedoneAfterTheCloserDies: a survivor that claimed a lost node's session dies before it closed
// it (the entry still names it as closer); the next survivor that sees it lost closes the session once.
func TestNodeLossRedoneAfterTheCloserDies(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a heartbeat to expire")
	}
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	linkA, linkZ := &cuttable{srv: srv}, &cuttable{srv: srv}
	a := newClusterNodeConn(t, srv.Connect(nats.InProcessServer(linkA)), workdir, "a")
	b := newClusterNode(t, srv, workdir, "b")
	ncZ := srv.Connect(nats.InProcessServer(linkZ))
	stZ, err := jsstore.Open(context.Background(), ncZ, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	z, err := stZ.Join(ctx, jsstore.ClusterOptions{Node: "z"})
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()

	s, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PromptAs(alice, prompt("refactor the parser")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's request stored", func() bool {
		v := s.View()
		return len(v.PendingPermissions) == 1 && v.DurableSeq != nil && *v.DurableSeq == s.Log().Head()
	})
	eventually(t, "b to see z", func() bool { return len(b.reg.Nodes()) == 3 })
	h := s.Log().Head()

	// a and z are cut off, and z had claimed a's session (as a survivor would) before it died.
	for _, l := range []*cuttable{linkA, linkZ} {
		l.set(true)
	}
	for _, nc := range []*nats.Conn{a.nc, ncZ} {
		if err := nc.ForceReconnect(); err != nil {
			t.Fatal(err)
		}
	}
	e, rev, err := b.st.Dir().Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.Closer, e.Status, e.Reason, e.Incarnation = "z", store.StatusFailed, sessions.ReasonNodeLost, ""
	if _, err := b.st.Dir().Update(ctx, e, rev); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(20 * time.Second)
	for {
		e, _, err = b.st.Dir().Get(ctx, s.ID)
		if err == nil && e.Closer == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the takeover z left was not redone: %+v, %v", e, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if e.Status != store.StatusFailed || e.Reason != sessions.ReasonNodeLost || e.Owner != "a" {
		t.Fatalf("entry after the redo: %+v", e)
	}
	stored := storedFrames(t, b, s.ID)
	n := 0
	for _, fr := range stored[h:] {
		if f := facts(t, fr.Frame); f.Method == "_gateway/session_status" {
			n++
		}
	}
	if stored[h].Seq != h+1 || n != 1 {
		t.Fatalf("closing frames after %d: %d status frames from seq %d", h, n, stored[h].Seq)
	}

	linkA.set(false) // a comes back and stands its session down, so it can stop cleanly
	eventually(t, "a to stand its session down", func() bool {
		got, err := a.reg.Get(s.ID)
		return err == nil && got != s
	})
}
