package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventsDialectAgent configures a native-dialect agent through an agents file and runs a full turn with a
// permission through the gateway: same REST and WebSocket faces as ACP agents.
func TestEventsDialectAgent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agents.json")
	cfg, _ := json.Marshal(map[string]any{"agent_servers": map[string]any{"ev": map[string]any{"command": eventsAgent, "kind": "events"}}})
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--agents", file, "--default-agent", "ev")
	s := g.createSession(nil)
	if s.Agent != "ev" {
		t.Fatalf("agent %q", s.Agent)
	}
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"please do the full turn"}`, &started)
	perm, _ := w.waitFor("permission", isPermissionRequest)
	// Choose the allow option by kind, as clients should, whatever its id.
	var req struct {
		Params struct {
			Options []struct{ OptionID, Kind string }
		}
	}
	_ = json.Unmarshal(perm.Raw, &req)
	allow := ""
	for _, o := range req.Params.Options {
		if o.Kind == "allow_once" {
			allow = o.OptionID
		}
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+permIDOf(perm), map[string]string{"optionId": allow}, nil); allow == "" || code != 200 {
		t.Fatalf("allow %q: %d\n%s", allow, code, perm.Raw)
	}
	ended, _ := w.waitFor("turn_ended", turnEnded(started.TurnID))
	if ended.Params.StopReason != "end_turn" {
		t.Fatalf("ended %s", ended.Raw)
	}
	frames := w.snapshot()
	checkContiguous(t, frames, 1)
	var text strings.Builder
	kinds := map[string]bool{}
	for _, f := range frames {
		kinds[f.updateKind()] = true
		if f.updateKind() == "agent_message_chunk" {
			var u struct{ Content struct{ Text string } }
			_ = json.Unmarshal(f.Params.Update, &u)
			text.WriteString(u.Content.Text)
		}
	}
	for _, k := range []string{"agent_message_chunk", "tool_call", "tool_call_update"} {
		if !kinds[k] {
			t.Errorf("no %s; frames:\n%s", k, w.dump())
		}
	}
	if text.Len() == 0 {
		t.Error("no answer text")
	}
}
