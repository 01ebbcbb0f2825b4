package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDeliveryAgentStopsReadingStdin: an agent that stops reading its stdin cannot hang the gateway. The
// prompt's write to it fails after --agent-write-timeout, the waiting REST call gets 502 turn_failed, and the
// session fails with a reason that says the agent stopped reading its input.
func TestDeliveryAgentStopsReadingStdin(t *testing.T) {
	t.Parallel()
	g, bin := testAgentGateway(t, "deaf", "--agent-write-timeout", "500ms")
	s := g.createSession(nil)
	pid := agentPid(t, bin)
	// More than the pipe holds; under --max-prompt-bytes.
	body, _ := json.Marshal(map[string]string{"text": strings.Repeat("m", 900<<10)})
	type res struct {
		code int
		body []byte
	}
	done := make(chan res, 1)
	go func() {
		code, b, _ := g.httpDo(context.Background(), "POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", string(body), nil)
		done <- res{code, b}
	}()
	var r res
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("a prompt to an agent that stopped reading its stdin hung")
	}
	if r.code != http.StatusBadGateway || !strings.Contains(string(r.body), "turn_failed") {
		t.Fatalf("waiting prompt: %d %s", r.code, r.body)
	}
	st := g.waitStatus(t, s.ID, "failed")
	if !strings.Contains(st.StatusReason, "stopped reading its input") {
		t.Fatalf("status reason %q does not say the agent stopped reading its input", st.StatusReason)
	}
	t.Logf("status reason: %q", st.StatusReason)
	waitGroupGone(t, pid)
}
