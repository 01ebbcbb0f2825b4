package acpws

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"
)

// TestFanInSeveralSessions: one socket attached to two sessions gets both logs, each turn's updates before
// its answer, while the turns run at once.
func TestFanInSeveralSessions(t *testing.T) {
	e := newEnv(t, Options{})
	cl := e.dial("/acp")
	cl.initialize()
	a, b := cl.newSession(e.dir), cl.newSession(e.dir)
	ids := map[string]string{} // request id → session
	ids[string(cl.request("session/prompt", textPrompt(a, "to a")))] = a
	ids[string(cl.request("session/prompt", textPrompt(b, "to b")))] = b
	updates := map[string]int{}
	for len(ids) > 0 {
		m := cl.next()
		switch {
		case m.Method == "session/request_permission":
			cl.answer(m, "allow-once")
		case m.Method == "session/update":
			updates[m.sessionID()]++
		case m.isResponse():
			sid, ok := ids[string(m.ID)]
			if !ok {
				t.Fatalf("unexpected response %s", m.raw)
			}
			if got := stopReason(t, m); got != "end_turn" {
				t.Fatalf("%s: stopReason %s", sid, got)
			}
			if updates[sid] == 0 {
				t.Fatalf("the answer for %s came before any of its updates", sid)
			}
			delete(ids, string(m.ID))
		}
	}
}

// TestReattachLeavesNoWatchers: each attach of an idle session waits for its log with one watcher
// goroutine; attaching again replaces it instead of adding one.
func TestReattachLeavesNoWatchers(t *testing.T) {
	e := newEnv(t, Options{})
	cl := e.dial("/acp")
	cl.initialize()
	sid := cl.newSession(e.dir)
	load := func() {
		var res json.RawMessage
		cl.mustResult("session/load", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, &res)
	}
	load()
	base := runtime.NumGoroutine()
	for range 200 {
		load()
	}
	// Goroutines of the requests themselves end just after their answers: wait for the count to settle.
	deadline := time.Now().Add(stepTimeout)
	for runtime.NumGoroutine() > base+10 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after 200 loads, %d before", runtime.NumGoroutine(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
