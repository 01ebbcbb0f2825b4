package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	"go.uber.org/goleak"
)

// These tests run internal/testagent as a real agent process: detach stops it, a prompt starts a new one
// that loads (or resumes) the session.

var (
	testAgentOnce sync.Once
	testAgentPath string
	testAgentErr  error
)

// testAgentBin builds internal/testagent once for the package.
func testAgentBin(t *testing.T) string {
	t.Helper()
	testAgentOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sessions-testagent-")
		if err != nil {
			testAgentErr = err
			return
		}
		testAgentPath = filepath.Join(dir, "testagent")
		if out, err := exec.Command("go", "build", "-o", testAgentPath, "github.com/acp-gateway/gateway/internal/testagent").CombinedOutput(); err != nil {
			testAgentErr = fmt.Errorf("building internal/testagent: %v\n%s", err, out)
		}
	})
	if testAgentErr != nil {
		t.Fatal(testAgentErr)
	}
	return testAgentPath
}

// taRegistry is a registry whose one agent "ta" is the test agent in flood mode (a prompt "N SIZE" answers N
// chunks, then end_turn) with the given extra flags.
func taRegistry(t *testing.T, cfg Config, flags ...string) *Registry {
	t.Helper()
	cfg.Workdir = t.TempDir()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.StopGrace = 200 * time.Millisecond
	spec := agents.Spec{Name: "ta", Kind: agents.KindACP, Command: testAgentBin(t), Args: append([]string{"-mode", "flood"}, flags...)}
	r, err := NewRegistry(cfg, []agents.Spec{spec}, "ta")
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the registry shuts down, then no goroutine of it may be left.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	t.Cleanup(func() { shutdown(t, r) })
	return r
}

// taTurn runs a prompt to its end and fails the test when it does not end end_turn.
func taTurn(t *testing.T, s *Session, text string) TurnResult {
	t.Helper()
	turn, err := s.Prompt(dlPrompt(text))
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	res := turn.Result()
	if res.Err != nil || res.StopReason != "end_turn" {
		t.Fatalf("turn %q ended %q, %v", text, res.StopReason, res.Err)
	}
	return res
}

// checkDetached checks the session is detached, listed, and its last frame says so with reason.
func checkDetached(t *testing.T, r *Registry, s *Session, reason string) {
	t.Helper()
	if st := s.Status(); st != store.StatusDetached {
		t.Fatalf("status = %q, want detached", st)
	}
	if _, err := r.Get(s.ID); err != nil {
		t.Fatalf("a detached session left the registry: %v", err)
	}
	fs := dlLog(t, s)
	last := fs[len(fs)-1]
	if last.Method != "_gateway/session_status" || last.Params.Status != "detached" || last.Params.Reason != reason {
		t.Fatalf("last frame = %s, want session_status detached %q", last.Raw, reason)
	}
}

// checkGrewByOneTurn checks after is before plus exactly the frames of one turn, seq going on at head+1 in
// the same epoch, with nothing of the agent's replay in it.
func checkGrewByOneTurn(t *testing.T, s *Session, before, after []dlFrame, turnID string) {
	t.Helper()
	if len(after) <= len(before) {
		t.Fatalf("log has %d frames after the turn, %d before", len(after), len(before))
	}
	for i, f := range before {
		if after[i].Raw != f.Raw {
			t.Fatalf("frame %d changed:\nbefore %s\nafter  %s", f.Seq, f.Raw, after[i].Raw)
		}
	}
	added := after[len(before):]
	if head := before[len(before)-1].Seq; added[0].Seq != head+1 {
		t.Errorf("first new seq = %d, want head+1 = %d", added[0].Seq, head+1)
	}
	if added[0].Method != "_gateway/turn_started" || added[len(added)-1].Method != "_gateway/turn_ended" {
		t.Errorf("new frames run from %s to %s, want one turn", added[0].Method, added[len(added)-1].Method)
	}
	for _, f := range added {
		var m struct {
			Params struct {
				Meta struct {
					Gateway struct {
						Epoch  string `json:"epoch"`
						TurnID string `json:"turnId"`
					} `json:"gateway"`
				} `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(f.Raw), &m)
		if g := m.Params.Meta.Gateway; g.Epoch != s.Epoch || g.TurnID != turnID {
			t.Errorf("frame %d has epoch %q turn %q, want %q %q: %s", f.Seq, g.Epoch, g.TurnID, s.Epoch, turnID, f.Raw)
		}
		if strings.Contains(f.Raw, "earlier") || strings.Contains(f.Raw, "replayed-1") {
			t.Errorf("the agent's replay leaked into the log: %s", f.Raw)
		}
	}
}

// TestIdleReaperDetaches: with DetachIdle the reaper stops an idle session's agent but keeps the session and
// its transcript; a prompt then re-attaches it through session/load and the agent's replay of the
// conversation stays out of the log.
func TestIdleReaperDetaches(t *testing.T) {
	r := taRegistry(t, Config{IdleTTL: time.Millisecond, DetachIdle: true})
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	taTurn(t, s, "1 5")
	ctx, stop := context.WithCancel(context.Background())
	reaped := make(chan struct{})
	go func() { r.ReapIdle(ctx); close(reaped) }()
	waitUntil(t, func() bool { return s.Status() == store.StatusDetached })
	stop()
	<-reaped
	checkDetached(t, r, s, "idle for 1ms")
	if err := s.SetMode(context.Background(), "x"); !errors.Is(err, sessionerr.ErrDetached) || !errors.Is(err, sessionerr.ErrNotReady) {
		t.Errorf("set_mode on a detached session: %v, want sessionerr.ErrDetached", err)
	}
	if d := s.Detail(); d.Status != store.StatusDetached || len(d.Snapshot) == 0 {
		t.Errorf("detail of a detached session: status %q, snapshot %d bytes", d.Status, len(d.Snapshot))
	}

	before := dlLog(t, s)
	res := taTurn(t, s, "2 8")
	checkGrewByOneTurn(t, s, before, dlLog(t, s), res.TurnID)
	if res.Text != strings.Repeat("x", 16) && len(res.Text) != 16 {
		t.Errorf("turn text = %q, want 16 bytes", res.Text)
	}
	if v := s.View(); v.Status != store.StatusIdle || !strings.Contains(string(v.Modes), `"loaded"`) {
		t.Errorf("after re-attach: status %q, modes %s; want idle with the load answer's modes", v.Status, v.Modes)
	}
	if ra := s.Resumability(); ra.AgentSessionID != "ta-1" || !ra.CanLoad || ra.CanResume {
		t.Errorf("resumability = %+v", ra)
	}
}

// TestIdleReaperClosesFailed: with DetachIdle the reaper still closes a failed session (its agent died; no
// prompt can revive it), so failed sessions do not pile up.
func TestIdleReaperClosesFailed(t *testing.T) {
	r := taRegistry(t, Config{IdleTTL: time.Millisecond, DetachIdle: true}, "-mode", "exit")
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(dlPrompt("die"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Result()
	waitUntil(t, func() bool { return s.Status() == store.StatusFailed })
	ctx, stop := context.WithCancel(context.Background())
	reaped := make(chan struct{})
	go func() { r.ReapIdle(ctx); close(reaped) }()
	waitUntil(t, func() bool { return s.Status() == store.StatusClosed })
	stop()
	<-reaped
}

// TestReattachByResume: an agent that can resume but not load is re-attached with session/resume.
func TestReattachByResume(t *testing.T) {
	r := taRegistry(t, Config{}, "-resume-only")
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	taTurn(t, s, "1 5")
	if !localOf(s).detach("test") {
		t.Fatal("detach refused")
	}
	checkDetached(t, r, s, "test")
	before := dlLog(t, s)
	res := taTurn(t, s, "1 3")
	checkGrewByOneTurn(t, s, before, dlLog(t, s), res.TurnID)
	if ra := s.Resumability(); ra.CanLoad || !ra.CanResume {
		t.Errorf("resumability = %+v", ra)
	}
}

// TestReattachNotResumable: an agent that can neither load nor resume refuses the prompt with
// ErrNotResumable; the session stays detached, its transcript intact and readable.
func TestReattachNotResumable(t *testing.T) {
	r := taRegistry(t, Config{}, "-no-load")
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	taTurn(t, s, "1 5")
	localOf(s).detach("test")
	before := dlLog(t, s)
	if _, err := s.Prompt(dlPrompt("1 1")); !errors.Is(err, sessionerr.ErrNotResumable) {
		t.Fatalf("prompt: %v, want sessionerr.ErrNotResumable", err)
	}
	checkDetached(t, r, s, "test")
	if after := dlLog(t, s); len(after) != len(before) {
		t.Errorf("the refused prompt changed the log: %d frames, was %d", len(after), len(before))
	}
	if d := s.Detail(); len(d.Snapshot) == 0 || d.LastSeq != before[len(before)-1].Seq {
		t.Errorf("detail: lastSeq %d, snapshot %d bytes", d.LastSeq, len(d.Snapshot))
	}
}

// TestReattachLoadFails: the agent failing session/load (after replaying part of its history) is an
// AgentError; the session is detached again, the log unchanged, and the next prompt tries again.
func TestReattachLoadFails(t *testing.T) {
	r := taRegistry(t, Config{}, "-fail-load")
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	localOf(s).detach("test")
	before := dlLog(t, s)
	for range 2 {
		_, err := s.Prompt(dlPrompt("1 1"))
		var ae *sessionerr.AgentError
		if !errors.As(err, &ae) || ae.Op != "session/load" {
			t.Fatalf("prompt: %v, want an sessionerr.AgentError of session/load", err)
		}
		checkDetached(t, r, s, "test")
		if after := dlLog(t, s); len(after) != len(before) {
			t.Fatalf("the failed load changed the log: %d frames, was %d: %s", len(after), len(before), after[len(after)-1].Raw)
		}
	}
}

// TestShutdownDetaches: with DetachOnShutdown, Shutdown cancels the running turn and ends every session
// detached ("gateway shutting down") rather than closed; the sessions stay listed and their streams end.
func TestShutdownDetaches(t *testing.T) {
	r := taRegistry(t, Config{DetachOnShutdown: true})
	idle, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	taTurn(t, idle, "1 5")
	busy, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 100 000 chunks: the turn is still running when the shutdown comes (it is cancelled by it).
	turn, err := busy.Prompt(dlPrompt("100000 10"))
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, r)
	if res := turn.Result(); res.StopReason != "cancelled" && res.StopReason != "end_turn" {
		t.Errorf("running turn ended %q", res.StopReason)
	}
	for _, s := range []*Session{idle, busy} {
		checkDetached(t, r, s, "gateway shutting down")
		select {
		case <-s.Closed():
			t.Error("a session detached by the shutdown reports closed")
		default:
		}
	}
	if _, err := idle.Prompt(dlPrompt("1 1")); !errors.Is(err, sessionerr.ErrShuttingDown) {
		t.Errorf("prompt after shutdown: %v, want sessionerr.ErrShuttingDown", err)
	}
	checkDetached(t, r, idle, "gateway shutting down")
}

// TestDetachedDoNotCount: a detached session does not count against MaxSessions; re-attaching it does.
func TestDetachedDoNotCount(t *testing.T) {
	r := taRegistry(t, Config{MaxSessions: 1})
	first, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	localOf(first).detach("test")
	second, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatalf("create beside a detached session: %v", err)
	}
	if _, err := first.Prompt(dlPrompt("1 1")); !errors.Is(err, sessionerr.ErrTooManySessions) {
		t.Fatalf("re-attach at the limit: %v, want sessionerr.ErrTooManySessions", err)
	}
	checkDetached(t, r, first, "test")
	second.Close("test")
	taTurn(t, first, "1 1")
}
