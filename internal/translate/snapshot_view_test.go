package translate

import (
	"testing"
)

// TestFrozenSnapshotUnchangedByLaterUpdates: a SnapshotView renders exactly the snapshot of the moment it was
// frozen while updates go on folding into the same messages, tool calls and session info (concurrently: -race
// catches any byte the view shares and the fold rewrites).
func TestFrozenSnapshotUnchangedByLaterUpdates(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.BeginTurn("T")
	updates := []string{
		chunk("agent_message_chunk", "hello "),
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","status":"pending"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":"one","extra":"x"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}}`,
		chunk("agent_thought_chunk", "hmm"),
	}
	later := []string{
		chunk("agent_thought_chunk", " more"),
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"out"}}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":null,"extra":"y"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}`,
		chunk("agent_message_chunk", "world"),
	}
	for _, u := range updates {
		mustUpdate(t, c, u)
	}
	want := string(c.Snapshot(5))
	v := c.FreezeSnapshot(5)
	rendered := make(chan string)
	go func() {
		var last string
		for range 50 {
			last = string(v.JSON())
		}
		rendered <- last
	}()
	for range 10 {
		for _, u := range later {
			mustUpdate(t, c, u)
		}
	}
	if got := <-rendered; got != want {
		t.Fatalf("frozen view changed:\n%s\nwant\n%s", got, want)
	}
	if now := string(c.Snapshot(6)); now == want {
		t.Fatal("the later updates did not change the snapshot: the test proves nothing")
	}
}
