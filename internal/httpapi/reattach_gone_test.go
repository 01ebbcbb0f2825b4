package httpapi

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
)

// TestPromptClientGoneDuringReattach: a REST client that goes away while its prompt re-attaches a detached
// session (the agent's session/load is held at a gate) starts no turn: the re-attach is abandoned, the agent
// stopped, and the session is detached again with its log as it was. Before, the prompt ran once the load
// answered, for nobody.
func TestPromptClientGoneDuringReattach(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	reg, base := reattachServer(t, agents.Spec{Name: "gated", Kind: agents.KindACP, Command: testAgentBin(t), Args: []string{"-mode", "flood", "-load-gate", gate}})
	st, created := call(t, "POST", base+"/v1/sessions", `{"agent":"gated"}`)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, created)
	}
	id := created["id"].(string)
	if err := reg.Detach(id, "test"); err != nil {
		t.Fatal(err)
	}
	sess, err := reg.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	_, headBefore := sess.Log().Bounds()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/sessions/"+id+"/prompt", strings.NewReader(`{"text":"1 1"}`))
	req.Header.Set("Content-Type", "application/json")
	sent := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		sent <- err
	}()
	waitStatus(t, sess, store.StatusStarting)
	cancel() // the client goes away while the agent loads
	<-sent
	waitStatus(t, sess, store.StatusDetached)
	if _, head := sess.Log().Bounds(); head != headBefore {
		t.Errorf("the abandoned prompt changed the log: head %d, was %d", head, headBefore)
	}
	if tu := sess.CurrentTurn(); tu != nil {
		t.Errorf("a turn %s runs for a client that went away", tu.ID)
	}
}

// waitStatus polls until the session has status st (bounded).
func waitStatus(t *testing.T, s *sessions.Session, st store.Status) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for s.Status() != st {
		if time.Now().After(deadline) {
			t.Fatalf("status is %q, want %q", s.Status(), st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
