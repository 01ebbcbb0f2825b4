package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// unguarded hides the cluster's loss guard (sessions.LossGuard), which opens one real TTL after a node starts
// beating: the sweep's timing is the test's (Config.OrphanSweepAfter).
type unguarded struct{ store.Cluster }

// TestOrphanSweep: node a died before any survivor watched nodes, leaving a session with a turn waiting on a
// permission; no loss event will ever name a. The survivors b and c sweep the directory once after watching
// nodes for OrphanSweepAfter: exactly one of them takes the session over, as on a NodeLost.
func TestOrphanSweep(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	link := &cuttable{srv: srv}
	a := newClusterNodeConn(t, srv.Connect(nats.InProcessServer(link)), workdir, "a")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
	h := s.Log().Head()

	// a is cut off and its key is gone, as if it had expired before b and c started.
	link.set(true)
	if err := a.nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(srv.Connect())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "acpgw-nodes")
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	edit := func(cfg *sessions.Config) {
		cfg.Cluster = unguarded{cfg.Cluster}
		cfg.OrphanSweepAfter = 50 * time.Millisecond
	}
	b := newClusterNodeConfig(t, srv.Connect(), workdir, "b", nil, edit)
	newClusterNodeConfig(t, srv.Connect(), workdir, "c", nil, edit)

	var e store.DirEntry
	eventually(t, "the orphan taken over", func() bool {
		e, _, err = b.st.Dir().Get(ctx, s.ID)
		return err == nil && e.Status == store.StatusFailed && e.Closer == ""
	})
	if e.Reason != sessions.ReasonNodeLost || e.Owner != "a" || e.Incarnation != "" || !e.Clean {
		t.Fatalf("entry after the sweep: %+v", e)
	}
	stored := storedFrames(t, b, s.ID)
	statuses, denied := 0, 0
	for _, fr := range stored[h:] {
		switch f := facts(t, fr.Frame); {
		case f.Method == "_gateway/session_status":
			statuses++
		case f.Method == "_gateway/permission_resolved" && f.Params.By == sessions.ReasonNodeLost:
			denied++
		}
	}
	if stored[h].Seq != h+1 || statuses != 1 || denied != 1 {
		t.Fatalf("closing frames after %d: from seq %d, %d status frames, %d denials", h, stored[h].Seq, statuses, denied)
	}

	link.set(false) // a comes back and stands its session down, so it can stop cleanly
	eventually(t, "a to stand its session down", func() bool {
		got, err := a.reg.Get(s.ID)
		return err == nil && got != s
	})
}
