package acpws

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
)

// floodAgent is testagent in flood mode (a prompt "N SIZE" answers N chunks, then end_turn) as agent name.
func floodAgent(t *testing.T, name string, flags ...string) agents.Spec {
	return agents.Spec{Name: name, Kind: agents.KindACP, Command: testAgentBinary(t), Args: append([]string{"-mode", "flood"}, flags...)}
}

// gatewaySeq is the `_meta.gateway.seq` of a logged frame (0 for other messages).
func gatewaySeq(m msg) uint64 {
	var p struct {
		Meta struct {
			Gateway struct {
				Seq uint64 `json:"seq"`
			} `json:"gateway"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.Meta.Gateway.Seq
}

// TestReattachAcrossFaces: a `/v1/sessions/{id}/ws` client connected across a detach sees session_status
// detached, then the frames of the turn an `/acp` session/prompt re-attaches the session for, with seq going
// on without a gap and nothing of the agent's replay of its history.
func TestReattachAcrossFaces(t *testing.T) {
	e := newEnvCfg(t, Options{}, sessions.Config{}, floodAgent(t, "ta"))
	cl := e.dial("/acp/ta")
	cl.initialize()
	sid := cl.newSession(e.dir)
	cl.mustResult("session/prompt", textPrompt(sid, "1 4"), nil)
	observer := e.dialObserver("/v1/sessions/" + sid + "/ws")

	if err := e.reg.Detach(sid, "test"); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for {
		m := observer.next()
		if s := gatewaySeq(m); s > 0 {
			if last > 0 && s != last+1 {
				t.Fatalf("seq %d after %d", s, last)
			}
			last = s
		}
		if m.Method == "_gateway/session_status" {
			if !strings.Contains(string(m.Params), `"detached"`) {
				t.Fatalf("status frame %s, want detached", m.raw)
			}
			break
		}
	}

	before, resp := cl.call("session/prompt", textPrompt(sid, "2 3"))
	if resp.Error != nil || !strings.Contains(string(resp.Result), `"end_turn"`) {
		t.Fatalf("prompt to the detached session: %s", resp.raw)
	}
	for _, m := range before {
		if strings.Contains(string(m.raw), "earlier") {
			t.Errorf("/acp client got the agent's replay: %s", m.raw)
		}
	}
	var got []string
	for {
		m := observer.next()
		if s := gatewaySeq(m); s > 0 {
			if s != last+1 {
				t.Fatalf("seq %d after %d", s, last)
			}
			last = s
		}
		if strings.Contains(string(m.raw), "earlier") {
			t.Errorf("observer got the agent's replay: %s", m.raw)
		}
		got = append(got, m.Method+" "+m.update())
		if m.Method == "_gateway/turn_ended" {
			break
		}
	}
	want := "_gateway/turn_started |session/update user_message_chunk|session/update agent_message_chunk|session/update agent_message_chunk|_gateway/turn_ended "
	if strings.Join(got, "|") != want {
		t.Errorf("observer after the detach:\n got %q\nwant %q", strings.Join(got, "|"), want)
	}
}

// TestPromptNotResumable: `/acp` session/prompt to a detached session whose agent can neither load nor
// resume it is -32603 "Internal error: session is not resumable", and the session stays detached.
func TestPromptNotResumable(t *testing.T) {
	e := newEnvCfg(t, Options{}, sessions.Config{}, floodAgent(t, "noload", "-no-load"))
	cl := e.dial("/acp/noload")
	cl.initialize()
	sid := cl.newSession(e.dir)
	if err := e.reg.Detach(sid, "test"); err != nil {
		t.Fatal(err)
	}
	_, resp := cl.call("session/prompt", textPrompt(sid, "1 1"))
	if resp.Error == nil || resp.Error.Code != -32603 || resp.Error.Message != "Internal error: session is not resumable" {
		t.Fatalf("prompt: %s", resp.raw)
	}
	s, err := e.reg.Get(sid)
	if err != nil || s.Status() != store.StatusDetached {
		t.Fatalf("after the refused prompt: %v %v", err, s.Status())
	}
}
