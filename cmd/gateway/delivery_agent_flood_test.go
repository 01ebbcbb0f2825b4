package main

import (
	"bytes"
	"net/http"
	"testing"
)

// TestDeliveryFastAgentIsNotFailed: an agent that writes 100 000 small updates as fast as it can outruns the
// session's handler. The SDK's reader handles each update itself and reads nothing from the agent's stdout
// meanwhile (back-pressure through the pipe) instead of closing the connection: the session is not failed,
// the turn ends end_turn and the log holds every update with contiguous seq.
func TestDeliveryFastAgentIsNotFailed(t *testing.T) {
	t.Parallel()
	const updates = 100000
	g, _ := testAgentGateway(t, "flood", "--log-max-frames", "1000000", "--log-max-bytes", "4294967296")
	s := g.createSession(nil)
	var res struct{ StopReason, Text string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"100000 1"}`, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("flood turn: %d %+v", code, res.StopReason)
	}
	if len(res.Text) != updates {
		t.Errorf("turn text has %d bytes, want one per update (%d)", len(res.Text), updates)
	}
	if st := g.waitStatus(t, s.ID, "idle"); st.StatusReason != "" {
		t.Fatalf("after the flood: %+v", st)
	}
	chunks := 0
	full, _ := g.walkPages(t, s.ID, 1000) // pages: a socket reading 100 000 frames on a loaded machine could meet the write watchdog
	for _, e := range full {
		if f, _ := parseWire(e.Raw); f.Method == "session/update" && bytes.Contains(e.Raw, []byte(`"agent_message_chunk"`)) {
			chunks++
		}
	}
	if chunks != updates {
		t.Fatalf("the log holds %d agent_message_chunk updates, want %d", chunks, updates)
	}
}
