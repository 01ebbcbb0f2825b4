package translate

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// badChunk is an agent_message_chunk whose text holds raw FF FE bytes (not escapes), as a broken agent writes it.
const badChunk = "{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"a\xff\xfeb\"}}}"

// TestUpdateFrameReplacesInvalidUTF8: raw invalid bytes inside a JSON string of an agent update never reach
// the log's frame, the forwarded params or the snapshot.
func TestUpdateFrameReplacesInvalidUTF8(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.BeginTurn("T")
	u, err := c.UpdateFrame([]byte(badChunk), GatewayMeta{Epoch: "e", TurnID: "T"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := u.Frame(1)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(f) || !json.Valid(f) {
		t.Fatalf("frame is not valid UTF-8 JSON: %q", f)
	}
	var got struct {
		Params struct {
			Update struct {
				Content struct{ Text string } `json:"content"`
			} `json:"update"`
		} `json:"params"`
	}
	if err := json.Unmarshal(f, &got); err != nil || got.Params.Update.Content.Text != "a\uFFFDb" {
		t.Fatalf("text %q (%v), want a\uFFFDb", got.Params.Update.Content.Text, err)
	}
	if s := c.Snapshot(1); !utf8.Valid(s) {
		t.Fatalf("snapshot is not valid UTF-8: %q", s)
	}
}

// TestFramesReplaceInvalidUTF8: every other frame builder (gateway notifications with raw members, permission
// requests, prompts) yields valid UTF-8.
func TestFramesReplaceInvalidUTF8(t *testing.T) {
	bad := []byte("{\"line\":\"\xff\xfe\"}")
	n, err := AppendNotification(nil, "_gateway/agent_output", bad, GatewayMeta{Seq: 1})
	if err != nil || !utf8.Valid(n) {
		t.Errorf("notification %q (%v)", n, err)
	}
	c := NewContext(Config{SessionID: "gw"})
	perm := []byte("{\"sessionId\":\"a\",\"toolCall\":{\"toolCallId\":\"t\",\"title\":\"rm \xff\"},\"options\":[{\"optionId\":\"o\",\"name\":\"\xfe\",\"kind\":\"allow_once\"}]}")
	req, err := ask.ParsePermissionRequest(perm)
	if err != nil || !utf8.Valid(req.ToolCall) || !utf8.Valid([]byte(req.Options[0].Name)) {
		t.Errorf("parsed request %+v (%v)", req, err)
	}
	if tc := c.PermissionToolCall(req.ToolCall); !utf8.Valid(tc) {
		t.Errorf("permission tool call %q", tc)
	}
	p, err := c.PermissionParams(perm)
	if err != nil {
		t.Fatal(err)
	}
	r, err := AppendRequest(nil, "p1", "session/request_permission", p, GatewayMeta{Seq: 2})
	if err != nil || !utf8.Valid(r) || !json.Valid(r) {
		t.Errorf("request %q (%v)", r, err)
	}
	for _, u := range c.UserPrompt("T", []json.RawMessage{json.RawMessage("{\"type\":\"text\",\"text\":\"\xff\xfe\"}")}) {
		if !utf8.Valid(u) || !json.Valid(u) {
			t.Errorf("prompt chunk %q", u)
		}
	}
	if s := c.Snapshot(3); !utf8.Valid(s) {
		t.Errorf("snapshot %q", s)
	}
}
