package translate

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

type snapDoc struct {
	Seq     uint64 `json:"seq"`
	Entries []struct {
		Kind      string            `json:"kind"`
		MessageID string            `json:"messageId"`
		TurnID    string            `json:"turnId"`
		Content   []json.RawMessage `json:"content"`
		ToolCall  json.RawMessage   `json:"toolCall"`
	} `json:"entries"`
	Plan      json.RawMessage `json:"plan"`
	Truncated bool            `json:"truncated"`
}

func snap(t *testing.T, c *Context) snapDoc {
	t.Helper()
	var d snapDoc
	raw := c.Snapshot(7)
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return d
}

func TestSnapshotEmpty(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	if got := string(c.Snapshot(0)); got != `{"seq":0,"entries":[],"plan":null}` {
		t.Fatal(got)
	}
}

func TestSnapshotMessageBound(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", SnapshotMaxMessageBytes: 100})
	c.BeginTurn("T")
	for range 10 {
		mustUpdate(t, c, chunk("agent_message_chunk", "0123456789abcdef\"é"))
	}
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}}`)
	d := snap(t, c)
	if !d.Truncated || len(d.Entries) != 1 || len(d.Entries[0].Content) != 1 {
		t.Fatalf("%+v", d)
	}
	text := str(t, d.Entries[0].Content[0], "text")
	if !strings.HasSuffix(text, "…[gateway: truncated]") || len(text) > 130 {
		t.Fatalf("text %q", text)
	}
}

func TestSnapshotEviction(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", SnapshotMaxEntries: 5})
	for i := range 12 {
		c.BeginTurn(string(rune('a' + i)))
		mustUpdate(t, c, chunk("agent_message_chunk", "x"))
		c.EndTurn("")
	}
	d := snap(t, c)
	if len(d.Entries) != 5 || !d.Truncated || d.Entries[0].TurnID != "h" || d.Entries[4].TurnID != "l" {
		t.Fatalf("%+v", d)
	}
	c = NewContext(Config{SessionID: "gw", SnapshotMaxBytes: 1000})
	c.BeginTurn("T")
	for i := range 50 {
		mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c`+strconv.Itoa(i)+`","title":"`+strings.Repeat("t", 100)+`"}}`)
	}
	d = snap(t, c)
	if len(d.Entries) > 10 || !d.Truncated {
		t.Fatalf("%d entries", len(d.Entries))
	}
	// The running turn's evicted calls stay known until it ends (snapshot_continued_test.go), then are forgotten.
	c.EndTurn("")
	if len(c.tools) > 10 {
		t.Fatalf("evicted tool calls still indexed: %d", len(c.tools))
	}
	// A later update to an evicted call of an ended turn starts a fresh entry instead of resurrecting the old one.
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"c0","status":"completed"}}`)
	d = snap(t, c)
	if last := d.Entries[len(d.Entries)-1].ToolCall; str(t, last, "toolCallId") != "c0" {
		t.Fatalf("last entry %s", last)
	}
}

func TestSnapshotInterleavedAgentIDs(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.BeginTurn("T")
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"a"}}}`)
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"agent_thought_chunk","messageId":"m2","content":{"type":"text","text":"t"}}}`)
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"b"}}}`)
	d := snap(t, c)
	if len(d.Entries) != 2 || str(t, d.Entries[0].Content[0], "text") != "ab" {
		t.Fatalf("%s", c.Snapshot(0))
	}
}

func TestUserPrompt(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.BeginTurn("T")
	out := c.UserPrompt("T", raws(`{"type":"text","text":"a"}`, `not json`, `{"type":"text","text":"b"}`, `{"type":"image","data":"AA==","mimeType":"image/png"}`))
	if len(out) != 3 {
		t.Fatalf("%d params", len(out))
	}
	for _, p := range out {
		originatedValid(t, p)
		if str(t, p, "update", "messageId") != "T-user" || str(t, p, "sessionId") != "gw" {
			t.Errorf("%s", p)
		}
	}
	d := snap(t, c)
	if len(d.Entries) != 1 || d.Entries[0].Kind != "user_message" || len(d.Entries[0].Content) != 2 || str(t, d.Entries[0].Content[0], "text") != "ab" {
		t.Fatalf("%s", c.Snapshot(0))
	}
}

func TestReplayPolicy(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	turn := func(id, stop, errJSON string) {
		c.BeginTurn(id)
		c.Note("_gateway/turn_started", []byte(`{"turnId":"`+id+`"}`))
		c.UserPrompt(id, raws(`{"type":"text","text":"q `+id+`"}`))
		mustUpdate(t, c, chunk("agent_thought_chunk", "thinking "+id))
		mustUpdate(t, c, chunk("agent_message_chunk", "answer "+id))
		reason := ""
		if stop == StopCancelled {
			reason = StopCancelled
		}
		c.EndTurn(reason)
		p := `{"turnId":"` + id + `","stopReason":"` + stop + `"`
		if errJSON != "" {
			p += `,"error":` + errJSON
		}
		c.Note("_gateway/turn_ended", []byte(p+"}"))
	}
	turn("ok", "end_turn", "")
	turn("cancel", "cancelled", "")
	turn("fail", "end_turn", `{"message":"x"}`)
	turn("refused", "refusal", "")
	c.BeginTurn("running")
	mustUpdate(t, c, chunk("agent_message_chunk", "answer running"))

	var texts []string
	for _, p := range c.Replay() {
		forwardedValid(t, p)
		originatedValid(t, p)
		texts = append(texts, str(t, p, "update", "sessionUpdate")+":"+str(t, p, "update", "content", "text"))
	}
	want := "user_message_chunk:q ok,agent_message_chunk:answer ok,user_message_chunk:q cancel,user_message_chunk:q fail," +
		"user_message_chunk:q refused,agent_message_chunk:answer refused,agent_message_chunk:answer running"
	if strings.Join(texts, ",") != want {
		t.Fatalf("replay\n got  %s\n want %s", strings.Join(texts, ","), want)
	}
}

func TestNoteIgnoresGarbage(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.Note("_gateway/turn_ended", []byte(`{"turnId":"never-started"}`))
	c.Note("_gateway/turn_ended", []byte(`garbage`))
	c.Note("_gateway/turn_started", []byte(`{}`))
	c.Note("_gateway/session_status", []byte(`{"status":"idle"}`))
	c.Note("_gateway/permission_resolved", nil)
	if c.turn != nil {
		t.Fatal("a garbage note started a turn")
	}
}

// TestAppendDoublingKeepsText: the snapshot's message text grows by doubling, bounded by the limit unless
// the text needs more, and holds exactly what was appended.
func TestAppendDoublingKeepsText(t *testing.T) {
	var text, want []byte
	for i := range 300 {
		body := bytes.Repeat([]byte{byte('a' + i%26)}, i%7*100)
		text = appendDoubling(text, body, 50_000)
		want = append(want, body...)
		if !bytes.Equal(text, want) {
			t.Fatalf("append %d: text differs", i)
		}
		if cap(text) > max(50_000, len(text)) {
			t.Fatalf("append %d: cap %d past the limit for %d bytes", i, cap(text), len(text))
		}
	}
	if got := appendDoubling(nil, []byte("xyz"), 0); string(got) != "xyz" {
		t.Fatalf("unbounded: %q", got)
	}
}
