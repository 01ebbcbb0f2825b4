package acpws

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
)

// TestPromptWhileAnotherSessionReattaches: while an `/acp` session/prompt re-attaches one session (its
// agent's session/load is held at a gate), the same socket's prompt to another session runs and is answered;
// the held prompt is answered once the load goes on. Before, the first prompt held the socket's lock across
// the whole re-attach, so the second waited for the agent's load.
func TestPromptWhileAnotherSessionReattaches(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnvCfg(t, Options{}, sessions.Config{}, floodAgent(t, "gated", "-load-gate", gate))
	cl := e.dial("/acp/gated")
	cl.initialize()
	held := cl.newSession(e.dir)
	live := cl.newSession(e.dir)
	if err := e.reg.Detach(held, "test"); err != nil {
		t.Fatal(err)
	}
	s, err := e.reg.Get(held)
	if err != nil {
		t.Fatal(err)
	}
	heldID := cl.request("session/prompt", textPrompt(held, "1 1"))
	waitFor(t, "the re-attach", func() bool { return s.Status() == store.StatusStarting })

	before, resp := cl.call("session/prompt", textPrompt(live, "2 3"))
	if resp.Error != nil || !strings.Contains(string(resp.Result), `"end_turn"`) {
		t.Fatalf("prompt to the live session: %s", resp.raw)
	}
	for _, m := range before {
		if m.isResponse() {
			t.Fatalf("the held prompt was answered before its load: %s", m.raw)
		}
	}

	f, err := os.OpenFile(gate, os.O_WRONLY, 0) // the agent waits in its load; this lets it go on
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, resp = cl.until(heldID, nil)
	if resp.Error != nil || !strings.Contains(string(resp.Result), `"end_turn"`) {
		t.Fatalf("the re-attaching prompt: %s", resp.raw)
	}
}
