package translate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestToolCallMerge(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.BeginTurn("T")
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"Edit","kind":"edit","status":"pending","locations":[{"path":"/a"},{"path":"/b"}],"content":[{"type":"diff","path":"/a","newText":"x"}],"_meta":{"agent":{"v":1},"keep":true}}}`)
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"in_progress","title":null,"locations":[{"path":"/c"}],"_meta":{"agent":{"v":2}}}}`)
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[],"rawOutput":{"ok":true},"newField":"n"}}`)
	got := string(c.PermissionToolCall(json.RawMessage(`{"toolCallId":"c"}`)))
	want := `{"toolCallId":"c","title":"Edit","kind":"edit","status":"in_progress","locations":[{"path":"/c"}],"content":[],"_meta":{"keep":true,"agent":{"v":2}},"rawOutput":{"ok":true},"newField":"n"}`
	if got != want {
		t.Fatalf("merged\n got  %s\n want %s", got, want)
	}
}

// A permission request often carries only part of the call; the client must still see title, kind,
// locations and the diff. The request's own fields win.
func TestPermissionToolCallMerged(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", Redact: true})
	c.BeginTurn("T")
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"w","title":"Write config","kind":"edit","status":"pending","locations":[{"path":"/p/c.json"}],"content":[{"type":"diff","path":"/p/c.json","oldText":"a","newText":"b"}]}}`)
	tests := []struct{ req, want string }{
		{`{"toolCallId":"w"}`, `{"toolCallId":"w","title":"Write config","kind":"edit","status":"pending","locations":[{"path":"/p/c.json"}],"content":[{"type":"diff","path":"/p/c.json","oldText":"a","newText":"b"}]}`},
		{`{"toolCallId":"w","title":"Write with token=abc","rawInput":{"x":1},"status":null}`, `{"toolCallId":"w","title":"Write with token=[REDACTED]","kind":"edit","status":"pending","locations":[{"path":"/p/c.json"}],"content":[{"type":"diff","path":"/p/c.json","oldText":"a","newText":"b"}],"rawInput":{"x":1}}`},
		{`{"toolCallId":"unknown","title":"password=x"}`, `{"toolCallId":"unknown","title":"password=[REDACTED]"}`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := string(c.PermissionToolCall(json.RawMessage(tt.req))); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.req, got, tt.want)
		}
	}
	// PermissionToolCall does not change the state.
	if got := string(c.PermissionToolCall(json.RawMessage(`{"toolCallId":"w"}`))); strings.Contains(got, "rawInput") {
		t.Errorf("state changed: %s", got)
	}
	p, err := c.PermissionParams([]byte(`{"sessionId":"agent","toolCall":{"toolCallId":"w"},"options":[{"optionId":"a","name":"A","kind":"allow_once"}],"_meta":{"x":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessionId":"gw","toolCall":{"toolCallId":"w","title":"Write config","kind":"edit","status":"pending","locations":[{"path":"/p/c.json"}],"content":[{"type":"diff","path":"/p/c.json","oldText":"a","newText":"b"}]},"options":[{"optionId":"a","name":"A","kind":"allow_once"}],"_meta":{"x":null}}`
	if string(p) != want {
		t.Fatalf("PermissionParams\n got  %s\n want %s", p, want)
	}
}

func TestEndTurnClosesOpenToolCalls(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.BeginTurn("T")
	for _, p := range []string{
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"done","title":"a","status":"completed"}}`,
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"fail","title":"b","status":"failed"}}`,
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"pend","title":"c","status":"pending"}}`,
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"run","title":"d"}}`,
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"run","status":"in_progress"}}`,
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"orphan","status":"in_progress"}}`, // update overtook its tool_call
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"later","title":"e","status":"pending"}}`,
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"later","status":"completed"}}`,
	} {
		mustUpdate(t, c, p)
	}
	closers := c.EndTurn(StopCancelled)
	var ids []string
	for _, p := range closers {
		originatedValid(t, p)
		if str(t, p, "sessionId") != "gw" || str(t, p, "update", "status") != "failed" || str(t, p, "update", "_meta", "gateway", "reason") != "cancelled" {
			t.Errorf("closer %s", p)
		}
		ids = append(ids, str(t, p, "update", "toolCallId"))
	}
	if strings.Join(ids, ",") != "pend,run,orphan" {
		t.Fatalf("closed %v", ids)
	}
	if got := c.EndTurn(StopCancelled); len(got) != 0 {
		t.Fatalf("second EndTurn closed again: %s", got)
	}
	// A normal end leaves open calls as the agent left them.
	c.BeginTurn("T2")
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"pend","title":"c","status":"pending"}}`)
	if got := c.EndTurn(""); len(got) != 0 {
		t.Fatalf("EndTurn(\"\") closed %s", got)
	}
	// Ids repeat across turns (the example agent): a new turn's tool_call is a new call, and the old one's
	// state is not touched.
	c.BeginTurn("T3")
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"pend","title":"new","status":"pending"}}`)
	closers = c.EndTurn("agent_exited")
	if len(closers) != 1 {
		t.Fatalf("closers %d", len(closers))
	}
	var snap struct {
		Entries []struct {
			TurnID   string          `json:"turnId"`
			ToolCall json.RawMessage `json:"toolCall"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(c.Snapshot(1), &snap); err != nil {
		t.Fatal(err)
	}
	var pend []string
	for _, e := range snap.Entries {
		if str(t, e.ToolCall, "toolCallId") == "pend" {
			pend = append(pend, e.TurnID+":"+str(t, e.ToolCall, "status"))
		}
	}
	if strings.Join(pend, ",") != "T:failed,T2:pending,T3:failed" {
		t.Fatalf("pend states %v", pend)
	}
}

func TestTruncatedFlagAndSchema(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 128})
	big, _ := json.Marshal(strings.Repeat("output line\n", 100))
	u := mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[{"type":"content","content":{"type":"text","text":`+string(big)+`}}],"rawInput":`+string(big)+`,"rawOutput":{"o":`+string(big)+`},"_meta":{"claudeCode":{"toolResponse":`+string(big)+`}}}}`)
	if !u.Truncated {
		t.Fatal("Truncated not set")
	}
	forwardedValid(t, u.Params)
	for _, f := range []string{"content", "rawInput", "rawOutput", "_meta"} {
		if v := field(t, u.Params, "update", f); len(v) > 2*128+1024 || !strings.Contains(string(v), "truncated") {
			t.Errorf("%s: %s", f, v)
		}
	}
	if u := mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","title":`+string(big)+`}}`); u.Truncated {
		t.Error("title is not bounded (only redacted)")
	}
}
