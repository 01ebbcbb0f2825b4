package translate

import (
	"encoding/json"
	"testing"
)

// An update to a tool call of the running turn whose entry was evicted gives it one new entry, marked
// continued and holding its whole merged state, so a client that also reads the log knows the card starts
// before the window and keeps one card for it.
func TestSnapshotContinuedToolCall(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", SnapshotMaxEntries: 2})
	c.BeginTurn("T")
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"x","title":"Edit main.go","kind":"edit","status":"in_progress"}}`)
	for _, id := range []string{"y", "z"} {
		mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"`+id+`","title":"Read","kind":"read","status":"completed"}}`)
	}
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"x","status":"completed"}}`)
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"x","content":[{"type":"diff","path":"/w/main.go","newText":"b"}]}}`)
	var d struct {
		Entries []struct {
			Continued bool            `json:"continued"`
			ToolCall  json.RawMessage `json:"toolCall"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(c.Snapshot(9), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != 2 || d.Entries[0].Continued || !d.Entries[1].Continued {
		t.Fatalf("want z, then x continued: %s", c.Snapshot(9))
	}
	x := d.Entries[1].ToolCall
	if str(t, x, "toolCallId") != "x" || str(t, x, "title") != "Edit main.go" || str(t, x, "status") != "completed" || field(t, x, "content") == nil {
		t.Fatalf("x's entry lacks its state: %s", x)
	}
	// A permission request names what the agent announced, as before the eviction.
	if got := c.PermissionToolCall(json.RawMessage(`{"toolCallId":"x"}`)); str(t, got, "title") != "Edit main.go" {
		t.Fatalf("permission tool call %s", got)
	}

	// After the turn the evicted calls are forgotten: an update starts a fresh, uncontinued entry.
	c.EndTurn("")
	for _, id := range []string{"y2", "z2"} {
		mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"`+id+`","title":"Read"}}`)
	}
	if len(c.tools) > 2 {
		t.Fatalf("evicted tool calls still indexed after their turn: %d", len(c.tools))
	}
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"x","status":"failed"}}`)
	d.Entries = nil
	if err := json.Unmarshal(c.Snapshot(9), &d); err != nil {
		t.Fatal(err)
	}
	if last := d.Entries[len(d.Entries)-1]; last.Continued || str(t, last.ToolCall, "title") != "" {
		t.Fatalf("after its turn: %s", c.Snapshot(9))
	}
}
