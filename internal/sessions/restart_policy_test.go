package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
)

// A restart re-checks what it stored against today's policy before an agent runs with it again: the cwd must still be the directory it was, inside today's workspace roots, and a client's
// stdio MCP servers need today's --allow-client-mcp-stdio.

// restoredSession creates a session with opts on a first registry, shuts it down, and returns the session
// as a second registry (built after between ran) restored it, with that registry.
func restoredSession(t *testing.T, env *storeEnv, opts sessions.CreateOptions, between func()) (*sessions.Session, *sessions.Registry) {
	t.Helper()
	ra, _ := env.registry()
	s, err := ra.Create(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	shutdownRegistry(t, ra)
	between()
	rb, _ := env.registry()
	t.Cleanup(func() { shutdownRegistry(t, rb) })
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := rb.Get(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return h, rb
}

// checkRefused checks that a prompt does not re-attach h: err wraps want with code, the session stays
// detached with a status reason naming why, and clients were told in a logged session_status frame.
func checkRefused(t *testing.T, h *sessions.Session, err, want error, code, reasonHas string) {
	t.Helper()
	if !errors.Is(err, want) || sessionerr.ErrorCode(err) != code {
		t.Fatalf("prompt: %v (code %q), want %v (%s)", err, sessionerr.ErrorCode(err), want, code)
	}
	v := h.View()
	if v.Status != store.StatusDetached || !strings.Contains(v.StatusReason, reasonHas) {
		t.Fatalf("status %s, reason %q; want detached with a reason naming %q", v.Status, v.StatusReason, reasonHas)
	}
	all := frames(t, h.Log())
	var last struct {
		Method string `json:"method"`
		Params struct {
			Status store.Status `json:"status"`
			Reason string       `json:"reason"`
		} `json:"params"`
	}
	if err := json.Unmarshal(all[len(all)-1].Frame, &last); err != nil {
		t.Fatal(err)
	}
	if last.Method != "_gateway/session_status" || last.Params.Status != store.StatusDetached || last.Params.Reason != v.StatusReason {
		t.Fatalf("last frame %s, want the session_status with reason %q", all[len(all)-1].Frame, v.StatusReason)
	}
}

// TestRestartRefusesASwappedCwd: a session's cwd replaced by a symlink to / while the gateway was down is
// not re-attached (its agent would run, and fs/* and terminals would reach, the whole file system).
func TestRestartRefusesASwappedCwd(t *testing.T) {
	env := newStoreEnv(t)
	cwd := filepath.Join(env.workdir, "proj")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	h, _ := restoredSession(t, env, sessions.CreateOptions{Cwd: cwd}, func() {
		if err := os.RemoveAll(cwd); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/", cwd); err != nil {
			t.Fatal(err)
		}
	})
	_, err := h.Prompt(prompt("1 5"))
	checkRefused(t, h, err, sessionerr.ErrForbiddenCwd, "forbidden_cwd", "cwd")

	// Put back as it was, the cwd re-attaches: the refusal is a check, not a verdict.
	if err := os.Remove(cwd); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	runTurn(t, h, principal.Principal{}, "1 5")
}

// TestRestartRefusesACwdOutsideTodaysRoots: the workspace roots the gateway restarts with decide, not the ones
// the session was created under.
func TestRestartRefusesACwdOutsideTodaysRoots(t *testing.T) {
	env := newStoreEnv(t)
	other := t.TempDir()
	h, _ := restoredSession(t, env, sessions.CreateOptions{}, func() { env.roots = []string{other} })
	_, err := h.Prompt(prompt("1 5"))
	checkRefused(t, h, err, sessionerr.ErrForbiddenCwd, "forbidden_cwd", "workspace roots")
}

// TestRestartRechecksStdioMCP: a client's stdio MCP server, allowed when the session was made, does not
// come back after a restart without --allow-client-mcp-stdio: the re-attach is refused, and a client that
// names other servers with session/load (AttachMCP) re-attaches.
func TestRestartRechecksStdioMCP(t *testing.T) {
	env := newStoreEnv(t, "-mcp-caps", "http")
	env.stdio = true
	stdio := []agents.MCPServer{{Type: agents.MCPStdio, Name: "shell", Command: "/bin/sh", Args: []string{"-c", "id"}}}
	h, _ := restoredSession(t, env, sessions.CreateOptions{MCPServers: stdio}, func() { env.stdio = false })
	_, err := h.Prompt(prompt("1 5"))
	checkRefused(t, h, err, sessionerr.ErrMCPStdioForbidden, "mcp_stdio_forbidden", `"shell"`)

	httpOnly := []agents.MCPServer{{Type: agents.MCPHTTP, Name: "tools", URL: "http://127.0.0.1:9/mcp"}}
	if err := h.AttachMCPAs(principal.Principal{}, httpOnly); err != nil {
		t.Fatalf("attach other MCP servers: %v", err)
	}
	runTurn(t, h, principal.Principal{}, "1 5")
}

// TestRecoverReportsUndecodableEntries: a directory entry that does not decode is left out of the restored
// sessions and named in the gateway log, not dropped in silence.
func TestRecoverReportsUndecodableEntries(t *testing.T) {
	env := newStoreEnv(t)
	logs := &lockedBuffer{}
	env.logger = slog.New(slog.NewTextHandler(logs, nil))
	ra, _, nc := env.registryConn()
	s, err := ra.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shutdownRegistry(t, ra)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), "acpgw-sessions")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), "garbled", []byte("{not an entry")); err != nil {
		t.Fatal(err)
	}
	rb, _ := env.registry()
	defer shutdownRegistry(t, rb)
	n, err := rb.Recover(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Recover: %d sessions, %v; want the one that decodes", n, err)
	}
	if _, err := rb.Get(s.ID); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "garbled") {
		t.Fatalf("the undecodable entry is not reported:\n%s", out)
	}
}

// lockedBuffer is a log destination the registry's goroutines share with the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
