package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// TestSessionsOfAGoneNodeCanBeRemoved: node a is lost and does not come back. Its failed session is closed
// through b (DELETE routed to a answered 503 owner_unavailable for ever), and b's retention janitor removes a's
// expired sessions (it only looked at its own node's).
func TestSessionsOfAGoneNodeCanBeRemoved(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	link := &cuttable{srv: srv}
	a := newClusterNodeConn(t, srv.Connect(nats.InProcessServer(link)), workdir, "a")
	edit := func(cfg *sessions.Config) {
		cfg.Cluster = unguarded{cfg.Cluster}
		cfg.OrphanSweepAfter = 50 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ids []string
	for range 2 {
		s, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
		// Stored before the cut: a write-behind whose publishes the cut lost waits for their acks at a's
		// shutdown until its deadline (the test's cleanup failed so, 1 run in 6 before session_ready
		// made the log one frame longer, 3 in 4 after).
		eventually(t, "a's frames stored", func() bool {
			v := s.View()
			return v.LastSeq >= 2 && v.DurableSeq != nil && *v.DurableSeq == v.LastSeq // session_ready, the demo's update
		})
	}
	link.set(true) // a is gone: cut off, and its key removed
	if err := a.nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	purgeNodeKey(t, srv, "a")
	b := newClusterNodeConfig(t, srv.Connect(), workdir, "b", nil, edit)
	for _, id := range ids {
		eventually(t, "a's session failed by b", func() bool {
			e, _, err := b.st.Dir().Get(ctx, id)
			return err == nil && e.Status == store.StatusFailed && e.Closer == ""
		})
	}

	f, err := b.reg.GetAs(alice, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the follower failed", func() bool { return f.Status() == store.StatusFailed })
	if err := f.CloseAs(bob, "not his"); !errors.Is(err, sessionerr.ErrNotFound) && !errors.Is(err, sessionerr.ErrForbidden) {
		t.Fatalf("a stranger's close: %v", err)
	}
	if err := f.CloseAs(alice, "done"); err != nil {
		t.Fatalf("close of a gone node's session through b: %v", err)
	}
	if _, _, err := b.st.Dir().Get(ctx, ids[0]); !errors.Is(err, sessionerr.ErrNotFound) {
		t.Fatalf("the entry after the close: %v", err)
	}
	if _, err := b.reg.GetAs(alice, ids[0]); !errors.Is(err, sessionerr.ErrNotFound) {
		t.Fatalf("b after the close: %v", err)
	}

	if n := b.reg.ExpireStoredAt(ctx, time.Now().Add(time.Hour)); n != 1 {
		t.Fatalf("retention removed %d sessions of the gone node, want 1", n)
	}
	if _, _, err := b.st.Dir().Get(ctx, ids[1]); !errors.Is(err, sessionerr.ErrNotFound) {
		t.Fatalf("the expired entry: %v", err)
	}
	eventually(t, "b to forget the expired session", func() bool { return len(b.reg.ListAs(alice)) == 0 })
	link.set(false) // so that a stops in time
}

// purgeNodeKey removes node's heartbeat key, as if it had expired.
func purgeNodeKey(t *testing.T, srv *natstest.Server, node string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(srv.Connect())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "acpgw-nodes")
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, node); err != nil {
		t.Fatal(err)
	}
}
