package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// Store mode against a real embedded JetStream server (docs/cluster.md §4): a registry shuts down, a new one
// on the same store recovers its sessions cold and detached, serves their logs byte for byte, and a prompt
// re-attaches them through internal/testagent.

// countingStore counts Feeds and can fail them.
type countingStore struct {
	store.Store
	feeds   atomic.Int32
	feedErr atomic.Pointer[error]
	// feedHold, when set, makes a Feed report on its entered channel, then wait for its release channel.
	feedHold atomic.Pointer[feedHold]
}

type feedHold struct {
	entered, release chan struct{}
	empty            bool // the held Feed then finds no frames (a stream the store lost or purged)
}

func (c *countingStore) Feed(ctx context.Context, sid string, live bool, fn func(store.StoredFrame) error) (uint64, error) {
	c.feeds.Add(1)
	if h := c.feedHold.Load(); h != nil {
		h.entered <- struct{}{}
		<-h.release
		if h.empty {
			return 0, nil
		}
	}
	if e := c.feedErr.Load(); e != nil {
		return 0, *e
	}
	return c.Store.Feed(ctx, sid, live, fn)
}

type storeEnv struct {
	t       *testing.T
	srv     *natstest.Server
	workdir string
	flags   []string
	limit   int           // Config.MaxSessions
	idleTTL time.Duration // Config.IdleTTL
	roots   []string      // Config.WorkspaceRoots
	stdio   bool          // Config.AllowClientMCPStdio
	logger  *slog.Logger  // Config.Logger; nil = discard
}

func newStoreEnv(t *testing.T, flags ...string) *storeEnv {
	// Registered first, so it runs last: after the connections and the server are gone.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	return &storeEnv{t: t, srv: srv, workdir: t.TempDir(), flags: flags}
}

// registry opens the store on a new connection and returns a registry on it (not yet recovered).
func (e *storeEnv) registry() (*sessions.Registry, *countingStore) {
	r, cs, _ := e.registryConn()
	return r, cs
}

// registryConn is registry, also returning its connection to the store.
func (e *storeEnv) registryConn() (*sessions.Registry, *countingStore, *nats.Conn) {
	t := e.t
	t.Helper()
	nc := e.srv.Connect()
	st, err := jsstore.Open(context.Background(), nc, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: st}
	spec := agents.Spec{Name: "ta", Kind: agents.KindACP, Command: sessions.TestAgentBin(t), Args: append([]string{"-mode", "flood"}, e.flags...)}
	demoSpec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	logger := e.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r, err := sessions.NewRegistry(sessions.Config{
		Workdir: e.workdir, Logger: logger, StopGrace: 200 * time.Millisecond,
		Store: cs, NodeID: "n1", DetachIdle: true, DetachOnShutdown: true, MaxSessions: e.limit, IdleTTL: e.idleTTL,
		WorkspaceRoots: e.roots, AllowClientMCPStdio: e.stdio,
	}, []agents.Spec{spec, demoSpec, {Name: "exiter", Kind: agents.KindACP, Command: sessions.TestAgentBin(t), Args: []string{"-mode", "exit"}}}, "ta")
	if err != nil {
		t.Fatal(err)
	}
	return r, cs, nc
}

func shutdownRegistry(t *testing.T, r *sessions.Registry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func prompt(text string) []json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return []json.RawMessage{b}
}

func runTurn(t *testing.T, s *sessions.Session, who principal.Principal, text string) {
	t.Helper()
	turn, err := s.PromptAs(who, prompt(text))
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	if res := turn.Result(); res.Err != nil || res.StopReason != "end_turn" {
		t.Fatalf("turn %q ended %q, %v", text, res.StopReason, res.Err)
	}
}

// frames reads the whole log.
func frames(t *testing.T, l *eventlog.Log) []eventlog.Entry {
	t.Helper()
	res, err := l.Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Entries
}

func sameFrames(t *testing.T, got, want []eventlog.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || string(got[i].Frame) != string(want[i].Frame) {
			t.Fatalf("frame %d differs:\n got %d %s\nwant %d %s", i, got[i].Seq, got[i].Frame, want[i].Seq, want[i].Frame)
		}
	}
}

var (
	alice = principal.Principal{ID: "alice", Name: "Alice", Role: principal.RoleUser}
	bob   = principal.Principal{ID: "bob", Name: "Bob", Role: principal.RoleUser}
)

func TestStoreRestartKeepsSessions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{{"load", nil}, {"resume", []string{"-resume-only"}}} {
		t.Run(tc.name, func(t *testing.T) {
			env := newStoreEnv(t, tc.flags...)
			ra, _ := env.registry()
			s, err := ra.Create(context.Background(), sessions.CreateOptions{Owner: alice})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ShareAs(alice, bob.ID, store.ShareViewer); err != nil {
				t.Fatal(err)
			}
			runTurn(t, s, alice, "3 20")
			shutdownRegistry(t, ra)
			live := frames(t, s.Log())
			liveDetail := s.Detail()
			if liveDetail.Status != store.StatusDetached {
				t.Fatalf("status after shutdown %q, want detached", liveDetail.Status)
			}

			rb, cs := env.registry()
			defer shutdownRegistry(t, rb)
			if n, err := rb.Recover(context.Background()); err != nil || n != 1 {
				t.Fatalf("Recover: %d, %v", n, err)
			}
			list := rb.ListAs(alice)
			if len(list) != 1 {
				t.Fatalf("listed %d sessions", len(list))
			}
			v := list[0].View()
			if v.Status != store.StatusDetached || v.LastSeq != liveDetail.LastSeq || v.Title != liveDetail.Title ||
				v.DurableSeq == nil || *v.DurableSeq != v.LastSeq || v.LastTurn == nil || v.LastTurn.TurnID != liveDetail.LastTurn.TurnID {
				t.Fatalf("cold view %+v, live %+v", v, liveDetail.View)
			}
			if cs.feeds.Load() != 0 {
				t.Fatal("listing hydrated a session")
			}
			// Ownership and shares are as before: bob views, a stranger does not see it.
			if _, err := rb.GetAs(principal.Principal{ID: "eve", Role: principal.RoleUser}, s.ID); !errors.Is(err, sessionerr.ErrNotFound) {
				t.Fatalf("a stranger got %v", err)
			}
			if cs.feeds.Load() != 0 {
				t.Fatal("a stranger's lookup hydrated the session")
			}
			var wg sync.WaitGroup
			got := make([]*sessions.Session, 4)
			for i := range got {
				wg.Go(func() {
					g, err := rb.GetAs(bob, s.ID)
					if err != nil {
						t.Errorf("GetAs: %v", err)
					}
					got[i] = g
				})
			}
			wg.Wait()
			if n := cs.feeds.Load(); n != 1 {
				t.Fatalf("%d hydrations, want 1", n)
			}
			h := got[0]
			if h.AccessOf(bob) != sessions.AccessView || h.AccessOf(alice) != sessions.AccessOwn {
				t.Fatalf("access: bob %v alice %v", h.AccessOf(bob), h.AccessOf(alice))
			}
			sameFrames(t, frames(t, h.Log()), live)
			d := h.Detail()
			if string(d.Snapshot) != string(liveDetail.Snapshot) {
				t.Fatalf("snapshot differs:\n got %s\nwant %s", d.Snapshot, liveDetail.Snapshot)
			}
			if d.Epoch != liveDetail.Epoch || d.Status != store.StatusDetached {
				t.Fatalf("hydrated epoch %s status %s", d.Epoch, d.Status)
			}

			// A prompt re-attaches: the seq goes on at head+1 in the same epoch, and the store follows.
			head := h.Log().Head()
			runTurn(t, h, alice, "2 10")
			after := frames(t, h.Log())
			sameFrames(t, after[:len(live)], live)
			if after[len(live)].Seq != head+1 {
				t.Fatalf("first frame after the re-attach has seq %d, want %d", after[len(live)].Seq, head+1)
			}
			waitDurable(t, h)

			// DELETE removes it from the store.
			if err := h.CloseAs(alice, "deleted"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := cs.Dir().Get(context.Background(), s.ID); !errors.Is(err, sessionerr.ErrNotFound) {
				t.Fatalf("directory entry after close: %v", err)
			}
			n := 0
			if _, err := cs.Store.Feed(context.Background(), s.ID, false, func(store.StoredFrame) error { n++; return nil }); err != nil || n != 0 {
				t.Fatalf("log after close: %d frames, %v", n, err)
			}
		})
	}
}

// waitDurable waits (bounded) until the store holds the session's whole log.
func waitDurable(t *testing.T, s *sessions.Session) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := s.View()
		if v.DurableSeq != nil && *v.DurableSeq == v.LastSeq {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("durableSeq %v never reached %d", v.DurableSeq, v.LastSeq)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStoreRestartNotResumable(t *testing.T) {
	env := newStoreEnv(t, "-no-load")
	ra, _ := env.registry()
	s, err := ra.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, principal.Principal{}, "1 5")
	shutdownRegistry(t, ra)
	rb, _ := env.registry()
	defer shutdownRegistry(t, rb)
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := rb.Get(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Prompt(prompt("1 5")); !errors.Is(err, sessionerr.ErrNotResumable) {
		t.Fatalf("prompt: %v, want sessionerr.ErrNotResumable", err)
	}
	if st := h.Status(); st != store.StatusDetached {
		t.Fatalf("status %s", st)
	}
	sameFrames(t, frames(t, h.Log()), frames(t, s.Log()))
}

// TestStoreHydrationError: a store that fails the feed is a clear ErrStoreUnavailable, and the next use
// hydrates once the store answers.
func TestStoreHydrationError(t *testing.T) {
	env := newStoreEnv(t)
	ra, _ := env.registry()
	s, err := ra.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shutdownRegistry(t, ra)
	rb, cs := env.registry()
	defer shutdownRegistry(t, rb)
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	cs.feedErr.Store(&boom)
	if _, err := rb.Get(s.ID); !errors.Is(err, sessionerr.ErrStoreUnavailable) || sessionerr.ErrorCode(err) != "store_unavailable" {
		t.Fatalf("Get with a failing store: %v (%s)", err, sessionerr.ErrorCode(err))
	}
	cs.feedErr.Store(nil)
	if _, err := rb.Get(s.ID); err != nil {
		t.Fatalf("Get after the store came back: %v", err)
	}
}

// TestStoreUncleanStopClosedOnce: a gateway dies (its store connection cut) in a turn waiting for a
// permission. The next start closes the stored log in a new epoch from H+1 (tool call, permission denied by
// restart, turn ended with an error, detached), and a second start writes nothing more. A client holding the
// old epoch resumes without a resync at or before H and gets epoch_changed past it.
func TestStoreUncleanStopClosedOnce(t *testing.T) {
	env := newStoreEnv(t)
	ra, _, nca := env.registryConn()
	s, err := ra.Create(context.Background(), sessions.CreateOptions{Agent: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(prompt("refactor the parser")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(s.View().PendingPermissions) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no permission request")
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitDurable(t, s)
	stored := frames(t, s.Log())
	h := stored[len(stored)-1].Seq
	nca.Close() // the process "dies": nothing it does from here reaches the store
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = ra.Shutdown(ctx) // its flush cannot succeed; the entry stays as the live session left it
	cancel()

	rb, _ := env.registry()
	if n, err := rb.Recover(context.Background()); err != nil || n != 1 {
		t.Fatalf("Recover: %d, %v", n, err)
	}
	hb, err := rb.Get(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := frames(t, hb.Log())
	sameFrames(t, got[:len(stored)], stored)
	closing := got[len(stored):]
	var methods []string
	for _, f := range closing {
		var m struct {
			Method string `json:"method"`
			Params struct {
				By   string `json:"by"`
				Meta struct {
					Gateway struct {
						Epoch string `json:"epoch"`
					} `json:"gateway"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(f.Frame, &m); err != nil {
			t.Fatal(err)
		}
		if m.Params.Meta.Gateway.Epoch == s.Epoch || m.Params.Meta.Gateway.Epoch != hb.Epoch {
			t.Fatalf("closing frame in epoch %s (old %s, current %s): %s", m.Params.Meta.Gateway.Epoch, s.Epoch, hb.Epoch, f.Frame)
		}
		if m.Method == "_gateway/permission_resolved" && m.Params.By != "restart" {
			t.Fatalf("permission resolved by %q: %s", m.Params.By, f.Frame)
		}
		if m.Method == "_gateway/turn_ended" && (!strings.Contains(string(f.Frame), `"stopReason":"error"`) || !strings.Contains(string(f.Frame), `"turnOutcome":"failed"`)) {
			t.Fatalf("the turn the restart ended does not say it failed: %s", f.Frame)
		}
		methods = append(methods, m.Method)
	}
	if closing[0].Seq != h+1 {
		t.Fatalf("closing frames start at %d, want %d", closing[0].Seq, h+1)
	}
	joined := strings.Join(methods, " ")
	for _, want := range []string{"session/update", "_gateway/permission_resolved", "_gateway/turn_ended", "_gateway/session_status"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("closing frames %v lack %s", methods, want)
		}
	}
	if !strings.Contains(string(closing[len(closing)-1].Frame), `"status":"detached"`) {
		t.Fatalf("last closing frame: %s", closing[len(closing)-1].Frame)
	}
	v := hb.View()
	if v.Status != store.StatusDetached || v.CurrentTurn != nil || len(v.PendingPermissions) != 0 || v.LastTurn == nil || v.LastTurn.Error == nil || v.LastTurn.StopReason != "error" || v.LastTurn.Outcome != "failed" {
		t.Fatalf("view after the unclean stop: %+v", v)
	}
	if st := hb.StartAt(h, true, s.Epoch); st.Resync != "" {
		t.Fatalf("old epoch at H: resync %q", st.Resync)
	}
	if st := hb.StartAt(h+1, true, s.Epoch); st.Resync != "epoch_changed" {
		t.Fatalf("old epoch past H: resync %q, want epoch_changed", st.Resync)
	}
	shutdownRegistry(t, rb)

	rc, _ := env.registry()
	defer shutdownRegistry(t, rc)
	if n, err := rc.Recover(context.Background()); err != nil || n != 1 {
		t.Fatalf("second Recover: %d, %v", n, err)
	}
	hc, err := rc.Get(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, frames(t, hc.Log()), got)
}

// TestStoreRetention: the janitor removes detached sessions not updated since the cutoff, except one a client
// is attached to; one updated after the cutoff stays.
func TestStoreRetention(t *testing.T) {
	env := newStoreEnv(t)
	ra, _ := env.registry()
	var ids []string
	for range 3 {
		s, err := ra.Create(context.Background(), sessions.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	shutdownRegistry(t, ra)
	rb, cs := env.registry()
	defer shutdownRegistry(t, rb)
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	watched, err := rb.Get(ids[1])
	if err != nil {
		t.Fatal(err)
	}
	detach, ok := watched.Attach()
	if !ok {
		t.Fatal("attach refused")
	}
	defer detach()
	if n := rb.ExpireStoredAt(context.Background(), time.Now().Add(-time.Hour)); n != 0 {
		t.Fatalf("expired %d sessions updated within the hour", n)
	}
	if n := rb.ExpireStoredAt(context.Background(), time.Now().Add(time.Hour)); n != 2 {
		t.Fatalf("expired %d sessions, want 2", n)
	}
	for i, id := range ids {
		_, _, err := cs.Dir().Get(context.Background(), id)
		_, gerr := rb.Get(id)
		if kept := i == 1; kept != (err == nil) || kept != (gerr == nil) {
			t.Fatalf("session %d: directory %v, registry %v", i, err, gerr)
		}
	}
}

// TestStoreKeepsClientMCPServers: the MCP servers a client added come back after a restart, values included
// (a re-attach passes them to the agent), and no view shows them.
func TestStoreKeepsClientMCPServers(t *testing.T) {
	env := newStoreEnv(t, "-mcp-caps", "http")
	ra, _ := env.registry()
	mcp := []agents.MCPServer{{Type: agents.MCPHTTP, Name: "tools", URL: "http://127.0.0.1:9/mcp",
		Headers: []agents.NameValue{{Name: "Authorization", Value: "Bearer secret-mcp-value"}}}}
	s, err := ra.Create(context.Background(), sessions.CreateOptions{MCPServers: mcp})
	if err != nil {
		t.Fatal(err)
	}
	shutdownRegistry(t, ra)
	rb, _ := env.registry()
	defer shutdownRegistry(t, rb)
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	listed, _ := json.Marshal(rb.List()[0].View())
	h, err := rb.Get(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := sessions.ClientMCP(h)
	if len(got) != 1 || !got[0].Equal(mcp[0]) {
		t.Fatalf("client MCP servers after the restart: %+v", got)
	}
	detail, _ := json.Marshal(h.Detail())
	for _, b := range [][]byte{listed, detail} {
		if strings.Contains(string(b), "secret-mcp-value") {
			t.Fatalf("a view shows the header value: %s", b)
		}
	}
	runTurn(t, h, principal.Principal{}, "1 5") // the re-attach passes them again (the agent checks the transport)
}

// TestStoreRestoredSessionsOutsideLimits: restored (detached) sessions do not count against MaxSessions; a
// re-attach does.
func TestStoreRestoredSessionsOutsideLimits(t *testing.T) {
	env := newStoreEnv(t)
	env.limit = 1
	ra, _ := env.registry()
	old, err := ra.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shutdownRegistry(t, ra)
	rb, _ := env.registry()
	defer shutdownRegistry(t, rb)
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.Create(context.Background(), sessions.CreateOptions{}); err != nil {
		t.Fatalf("create beside a restored session at MaxSessions 1: %v", err)
	}
	h, err := rb.Get(old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Prompt(prompt("1 5")); !errors.Is(err, sessionerr.ErrTooManySessions) {
		t.Fatalf("re-attach at the limit: %v, want sessionerr.ErrTooManySessions", err)
	}
}

// TestStoreReaperKeepsFailedSessions: with a store the idle reaper detaches idle sessions and leaves failed
// ones (their transcript readable) to the retention janitor, instead of closing and removing them.
func TestStoreReaperKeepsFailedSessions(t *testing.T) {
	env := newStoreEnv(t)
	env.idleTTL = time.Millisecond
	r, cs := env.registry()
	defer shutdownRegistry(t, r)
	// Created first, so a reaper round reaches it before the idle one (List is oldest first).
	failed, err := r.Create(context.Background(), sessions.CreateOptions{Agent: "exiter"})
	if err != nil {
		t.Fatal(err)
	}
	idle, err := r.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := failed.Prompt(prompt("die")); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, failed, store.StatusFailed)
	ctx, stop := context.WithCancel(context.Background())
	reaped := make(chan struct{})
	go func() { r.ReapIdle(ctx); close(reaped) }()
	defer func() { stop(); <-reaped }()
	waitStatus(t, idle, store.StatusDetached) // the reaper has run a round past the cutoff
	if _, err := r.Get(failed.ID); err != nil {
		t.Fatalf("failed session after the reaper: %v", err)
	}
	if _, _, err := cs.Dir().Get(context.Background(), failed.ID); err != nil {
		t.Fatalf("failed session's entry after the reaper: %v", err)
	}
}

func waitStatus(t *testing.T, s *sessions.Session, want store.Status) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s.Status() != want {
		if time.Now().After(deadline) {
			t.Fatalf("status %s, want %s", s.Status(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
