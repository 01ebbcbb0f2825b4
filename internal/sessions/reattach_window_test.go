package sessions

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// TestReattachKeepsUpdateBehindLoadAnswer: an update the agent sends right behind its session/load answer
// (real agents announce their commands then) is live, not replay: it is logged exactly once, while the
// replay before the answer stays out. The swallowing ends where the answer is on the wire, not when the
// gateway gets round to it.
func TestReattachKeepsUpdateBehindLoadAnswer(t *testing.T) {
	r := taRegistry(t, Config{}, "-after-load")
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 { // each re-attach is one more chance for the update to fall into the gap
		if !localOf(s).detach("test") {
			t.Fatal("detach refused")
		}
		// The update is on the wire before the prompt's answer, so it has been handled when the turn ends.
		taTurn(t, s, "1 1")
		n := 0
		for _, f := range dlLog(t, s) {
			if strings.Contains(f.Raw, `"after-load"`) {
				n++
			}
			if strings.Contains(f.Raw, "earlier") || strings.Contains(f.Raw, "replayed-1") {
				t.Fatalf("the agent's replay leaked into the log: %s", f.Raw)
			}
		}
		if n != round+1 {
			t.Fatalf("after %d re-attaches the log holds %d updates sent behind the load answer, want %d", round+1, n, round+1)
		}
	}
}

// TestShutdownDuringReattach: a shutdown that comes while a prompt re-attaches the session (its agent has
// just loaded it) finds the session starting, so its detach passes it by; the re-attach must then not make
// the agent the session's and start the turn: the prompt fails ErrShuttingDown, the agent is stopped and the
// session stays detached (goleak and the status check catch an agent left running past Shutdown).
func TestShutdownDuringReattach(t *testing.T) {
	r := taRegistry(t, Config{DetachOnShutdown: true})
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !localOf(s).detach("test") {
		t.Fatal("detach refused")
	}
	before := dlLog(t, s)
	r.beforeAttach = func(*Session) { shutdown(t, r) }
	if _, err := s.Prompt(dlPrompt("1 1")); !errors.Is(err, sessionerr.ErrShuttingDown) {
		t.Fatalf("prompt re-attaching across a shutdown: %v, want sessionerr.ErrShuttingDown", err)
	}
	checkDetached(t, r, s, "test")
	if after := dlLog(t, s); len(after) != len(before) {
		t.Errorf("the abandoned re-attach changed the log: %d frames, was %d: %s", len(after), len(before), after[len(after)-1].Raw)
	}
}

// TestReattachClientGone: the prompting client going away while its prompt re-attaches the session (here
// right after the agent loaded it) starts no turn: the prompt fails with the context's cause, the agent is
// stopped, the session stays detached with its log as it was, and the next prompt re-attaches it.
func TestReattachClientGone(t *testing.T) {
	r := taRegistry(t, Config{})
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !localOf(s).detach("test") {
		t.Fatal("detach refused")
	}
	before := dlLog(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	r.beforeAttach = func(*Session) { cancel() }
	if _, err := s.PromptContext(ctx, principal.Principal{}, dlPrompt("1 1"), ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("prompt whose client went away: %v, want context.Canceled", err)
	}
	r.beforeAttach = nil
	checkDetached(t, r, s, "test")
	if after := dlLog(t, s); len(after) != len(before) {
		t.Errorf("the abandoned re-attach changed the log: %d frames, was %d", len(after), len(before))
	}
	taTurn(t, s, "1 1")
}

// TestShutdownDuringCreate: with DetachOnShutdown, a shutdown that comes as a new session's agent has just
// answered session/new finds the session starting, so its detach passes it by; Create must then stop that
// agent and fail ErrShuttingDown rather than hand out a session whose agent outlives Shutdown.
func TestShutdownDuringCreate(t *testing.T) {
	r := taRegistry(t, Config{DetachOnShutdown: true})
	var started *Session
	r.beforeAttach = func(s *Session) {
		started = s
		// What Shutdown does before it waits for the starts: refuse, cut starts short, detach each session.
		r.mu.Lock()
		r.closing = true
		r.mu.Unlock()
		r.stopStarts()
		if localOf(s).detach(shutdownReason) {
			t.Error("detached a session that is still starting")
		}
	}
	s, err := r.Create(context.Background(), CreateOptions{})
	if !errors.Is(err, sessionerr.ErrShuttingDown) {
		t.Fatalf("create across a shutdown: %v (session %v), want sessionerr.ErrShuttingDown", err, s != nil)
	}
	if started == nil {
		t.Fatal("the hook did not run")
	}
	if _, err := r.Get(started.ID); !errors.Is(err, sessionerr.ErrNotFound) {
		t.Errorf("the failed create left its session listed: %v", err)
	}
}

// TestShutdownWaitsForRunningDetach: a shutdown that comes while another detach (the idle reaper's,
// Registry.Detach) is still stopping a session's agent waits for it: when Shutdown returns the agent is gone
// and the session's last frame says detached. Before, Shutdown's own detach gave up at once and closed the
// log under the running one, whose status frame was then lost.
func TestShutdownWaitsForRunningDetach(t *testing.T) {
	r := taRegistry(t, Config{DetachOnShutdown: true}, "-mode", "stubborn")
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The stubborn agent ignores session/cancel: the detach waits StopGrace before it stops the agent.
	if _, err := s.Prompt(dlPrompt("work")); err != nil {
		t.Fatal(err)
	}
	detached := make(chan error, 1)
	go func() { detached <- r.Detach(s.ID, "test") }()
	waitUntil(t, core.ControlOf(s).Stopping)
	shutdown(t, r)
	if st := s.Status(); st != store.StatusDetached {
		t.Fatalf("status after Shutdown = %q, want detached", st)
	}
	fs := dlLog(t, s)
	if last := fs[len(fs)-1]; last.Method != "_gateway/session_status" || last.Params.Status != "detached" {
		t.Fatalf("last frame = %s, want session_status detached", last.Raw)
	}
	if err := <-detached; err != nil {
		t.Fatalf("the first detach: %v", err)
	}
}

// TestCloseDuringReattach: Close while a prompt re-attaches the session (the agent's session/load is held
// at a gate) ends the re-attach at once: the agent is stopped and the prompt fails ErrClosed, rather than
// both waiting for the agent's load (up to StartTimeout) after the session is gone.
func TestCloseDuringReattach(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	r := taRegistry(t, Config{StartTimeout: time.Minute}, "-load-gate", gate)
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !localOf(s).detach("test") {
		t.Fatal("detach refused")
	}
	prompted := make(chan error, 1)
	go func() {
		_, err := s.Prompt(dlPrompt("1 1"))
		prompted <- err
	}()
	waitUntil(t, func() bool { return s.Status() == store.StatusStarting })
	s.Close("test")
	bound := time.NewTimer(15 * time.Second) // a bound for the failure report, not a synchronisation
	defer bound.Stop()
	select {
	case err := <-prompted:
		if !errors.Is(err, sessionerr.ErrClosed) {
			t.Fatalf("prompt re-attaching a closed session: %v, want sessionerr.ErrClosed", err)
		}
	case <-bound.C:
		t.Fatal("the re-attach still waits for the agent's load after Close")
	}
}
