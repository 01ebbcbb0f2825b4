package sessions

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// TestSessionReadyIsWhereTheAgentAnswered: the demo agent sends available_commands_update right after its
// session/new answer, and here the start takes its time (beforeAttach waits until that update is logged or
// held). session_ready is logged where the answer is in wire order, before the update. Without the hold the
// update came first (seq 1) whenever the start was slower than the agent.
func TestSessionReadyIsWhereTheAgentAnswered(t *testing.T) {
	r := dlRegistry(t, Config{})
	r.beforeAttach = func(s *Session) {
		for s.Log().Head() < 1 && core.ControlOf(s).HeldUpdates() == 0 {
			time.Sleep(time.Millisecond) // the agent's update is on its way: read, then logged or held
		}
	}
	s := dlSession(t, r, PolicyAsk)
	defer s.Close("test over")
	deadline := time.Now().Add(10 * time.Second)
	for s.Log().Head() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the log holds %d frames, want session_ready and the agent's update", s.Log().Head())
		}
		time.Sleep(time.Millisecond)
	}
	res, err := s.Log().Read(0, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		var f struct {
			Method string `json:"method"`
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(e.Frame, &f); err != nil {
			t.Fatal(err)
		}
		got = append(got, f.Method+" "+f.Params.Update.SessionUpdate)
	}
	if len(got) != 2 || got[0] != "_gateway/session_ready " || got[1] != "session/update available_commands_update" {
		t.Fatalf("the log starts with %q, want session_ready, then the agent's update", got)
	}
	if st := s.Status(); st != "idle" {
		t.Fatalf("status %s", st)
	}
}
