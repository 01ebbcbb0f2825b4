package jsstore_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

// connect opens the store through server i of the cluster with R3 streams and buckets, fenced (mode c's Connect).
func (c *natsCluster) connect(t testing.TB, i int) *jsstore.Store {
	t.Helper()
	st, closeConn, err := jsstore.Connect(ctxT(t), jsstore.Remote{URLs: []string{c.urls[i]}}, jsstore.Options{Replicas: 3, Fence: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeConn)
	return st
}

// TestThreeNodeCluster runs the cluster layer against a real 3-node nats-server cluster: Connect creates R3
// streams and buckets; frames persisted through one server are fed byte-identical through another; a
// directory CAS race between clients on different servers has exactly one winner per round; a routed command
// crosses servers; and when a gateway's connection is killed, the gateways on the other servers declare it
// lost by expiry (the time from its last good beat to the event is logged).
func TestThreeNodeCluster(t *testing.T) {
	nc := startNATSCluster(t)
	st := []*jsstore.Store{nc.connect(t, 0), nc.connect(t, 1), nc.connect(t, 2)}

	t.Run("R3", func(t *testing.T) {
		js, err := jetstream.New(st[0].Conn())
		if err != nil {
			t.Fatal(err)
		}
		info, err := js.Stream(ctxT(t), "acpgw-log")
		if err != nil {
			t.Fatal(err)
		}
		si, err := info.Info(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if si.Config.Replicas != 3 || si.Cluster == nil || len(si.Cluster.Replicas) != 2 {
			t.Fatalf("log stream: replicas %d, cluster %+v", si.Config.Replicas, si.Cluster)
		}
		kv, err := js.KeyValue(ctxT(t), "acpgw-sessions")
		if err != nil {
			t.Fatal(err)
		}
		status, err := kv.Status(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if status.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Replicas != 3 {
			t.Fatalf("directory bucket: %+v", status.(*jetstream.KeyValueBucketStatus).StreamInfo().Config)
		}
	})

	t.Run("PersistThroughOneFeedThroughAnother", func(t *testing.T) {
		const n = 2000
		l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 1000})
		p := st[0].Persist("r3s1", "e1", l, 0)
		defer p.Stop()
		appendFrames(t, l, 1, n, never)
		flush(t, p)
		stored, _ := feedAll(t, st[2], "r3s1")
		checkFrames(t, stored, "e1", n, never)
	})

	// Each round reads the revision through server 1 right after the last round's winner wrote through 1 or 2.
	// With KV's direct get, a replica that had not applied that write could answer: CI once saw a round that
	// nobody won. The directory now reads from the stream leader.
	t.Run("DirectoryCASRace", func(t *testing.T) {
		d1, d2 := st[0].Dir(), st[1].Dir()
		if _, err := d1.Create(ctxT(t), store.DirEntry{ID: "race", Status: store.StatusDetached}); err != nil {
			t.Fatal(err)
		}
		for round := range 20 {
			_, rev, err := d1.Get(ctxT(t), "race")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, d := range []store.Directory{d1, d2} {
				wg.Go(func() {
					_, errs[i] = d.Update(ctxT(t), store.DirEntry{ID: "race", Status: store.StatusFailed, Closer: []string{"a", "b"}[i]}, rev)
				})
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, store.ErrRevision):
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if won != 1 {
				t.Fatalf("round %d: %d writers won (%v)", round, won, errs)
			}
		}
	})

	t.Run("CommandAcrossServers", func(t *testing.T) {
		a := join(t, st[0], "ca")
		if err := a.Serve(ctxT(t), errorsByOp); err != nil {
			t.Fatal(err)
		}
		c := join(t, st[2], "cc")
		reply, err := c.Call(ctxT(t), "ca", store.Command{Op: "echo", SID: "s1"})
		if err != nil || reply.Head != 12 {
			t.Fatalf("echo: %+v %v", reply, err)
		}
		if _, err := call(t, c, "ca", store.Command{Op: "fail:session_failed"}); !errors.Is(err, sessionerr.ErrFailed) {
			t.Fatalf("a sentinel across servers: %v", err)
		}
	})

	t.Run("TicketAcrossServers", func(t *testing.T) {
		mint, err := st[0].Tickets(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		redeem, err := st[2].Tickets(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		who := principal.Principal{ID: "u1", Role: principal.RoleUser}
		tok, _, err := mint.Mint(ctxT(t), "s1", who)
		if err != nil {
			t.Fatal(err)
		}
		if g, err := redeem.Redeem(ctxT(t), tok, "s1"); err != nil || g.Principal != who {
			t.Fatalf("redeem on another server: %+v %v", g, err)
		}
		if _, err := mint.Redeem(ctxT(t), tok, "s1"); !errors.Is(err, jsstore.ErrTicketInvalid) {
			t.Fatalf("second redemption: %v", err)
		}
	})

	t.Run("NodeLoss", func(t *testing.T) {
		b, c := join(t, st[1], "b"), join(t, st[2], "c")
		evB, evC := watch(t, b), watch(t, c)
		waitGuardOpen(t, b)
		waitGuardOpen(t, c)
		for run := range 3 {
			victim, closeConn, err := jsstore.Connect(ctxT(t), jsstore.Remote{URLs: []string{nc.urls[0]}}, jsstore.Options{Replicas: 3, Fence: true})
			if err != nil {
				t.Fatal(err)
			}
			a := join(t, victim, "a")
			inc := a.Self().Incarnation
			waitFor(t, "b and c to see a beat", func() bool {
				_, _, okB := evB.find(store.NodeBeat, "a", inc)
				_, _, okC := evC.find(store.NodeBeat, "a", inc)
				return okB && okC
			})
			closeConn() // the gateway's connection dies: no more beats, no delete
			lastBeat, killed := a.LastBeat(), time.Now()
			for name, ev := range map[string]*eventLog{"b": evB, "c": evC} {
				waitFor(t, name+" to declare a lost", func() bool { _, _, ok := ev.find(store.NodeLost, "a", inc); return ok })
				e, at, _ := ev.find(store.NodeLost, "a", inc)
				if e.Reason != store.LossExpired {
					t.Fatalf("run %d: %s saw %+v", run, name, e)
				}
				t.Logf("run %d: %s declared a lost %v after its last beat (%v after its connection closed)",
					run, name, at.Sub(lastBeat).Round(time.Millisecond), at.Sub(killed).Round(time.Millisecond))
			}
			a.Close()
		}
	})
}

// BenchmarkCallThreeNodes is one routed command's round trip between gateways on different servers of a
// real 3-node cluster (caller on n3, owner on n1).
func BenchmarkCallThreeNodes(b *testing.B) {
	nc := startNATSCluster(b)
	owner := join(b, nc.connect(b, 0), "a")
	if err := owner.Serve(ctxT(b), errorsByOp); err != nil {
		b.Fatal(err)
	}
	caller := join(b, nc.connect(b, 2), "c")
	cmd := store.Command{Op: "echo", SID: "s1", Args: []byte(`{"text":"hi"}`)}
	ctx := ctxT(b)
	for b.Loop() {
		if _, err := caller.Call(ctx, "a", cmd); err != nil {
			b.Fatal(err)
		}
	}
}

// On R3 streams too, a writer whose log another node forked (through another server) is refused and fenced.
func TestPersistRefusedAfterTakeoverR3(t *testing.T) {
	nc := startNATSCluster(t)
	refusedAfterTakeover(t, nc.connect(t, 0), nc.connect(t, 1))
}

// A fenced writer on an R3 log batches as on one server: the cluster's servers allow atomic batches.
func TestPersistFencedStoresBatchesR3(t *testing.T) {
	nc := startNATSCluster(t)
	persistAndCheckBatch(t, nc.connect(t, 1), 100)
}

// BenchmarkPersistR3 is BenchmarkPersist on a real 3-node cluster with an R3 log stream (256-byte frames,
// append to acknowledged by a quorum), the writer connected to n2 and fenced as in mode c.
func BenchmarkPersistR3(b *testing.B) {
	nc := startNATSCluster(b)
	st := nc.connect(b, 1)
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 10_000})
	p := st.Persist("bench", "e1", l, 0)
	defer p.Stop()
	frame := make([]byte, 256)
	for i := range frame {
		frame[i] = 'x'
	}
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := l.Append(eventlog.KindUpdate, func(uint64) ([]byte, error) { return frame, nil }); err != nil {
			b.Fatal(err)
		}
	}
	flush(b, p)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "frames/s")
}
