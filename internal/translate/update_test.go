package translate

import (
	"strings"
	"testing"
)

func TestUpdatePassThrough(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"chunk with id: only sessionId changes",
			`{"sessionId":"agent-s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m-1"}}`,
			`{"sessionId":"gw","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m-1"}}`},
		{"unknown variant byte-faithful",
			`{"sessionId":"agent-s","update":{"sessionUpdate":"brand_new_variant", "foo" : [1, {"x":null}],"bar":"\u00e9"}}`,
			`{"sessionId":"gw","update":{"sessionUpdate":"brand_new_variant", "foo" : [1, {"x":null}],"bar":"\u00e9"}}`},
		{"agent _meta kept at both levels",
			`{"_meta":{"traceparent":"00-ab"},"sessionId":"agent-s","update":{"sessionUpdate":"plan","entries":[],"_meta":{"k":1}}}`,
			`{"_meta":{"traceparent":"00-ab"},"sessionId":"gw","update":{"sessionUpdate":"plan","entries":[],"_meta":{"k":1}}}`},
		{"null values kept",
			`{"sessionId":"agent-s","update":{"sessionUpdate":"session_info_update","title":null,"updatedAt":null}}`,
			`{"sessionId":"gw","update":{"sessionUpdate":"session_info_update","title":null,"updatedAt":null}}`},
		{"missing sessionId added",
			`{"update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}`,
			`{"update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"},"sessionId":"gw"}`},
		{"tool call without bound or redaction untouched",
			`{"sessionId":"agent-s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read","status":"pending","rawInput":{"path":"/a"},"extra":null}}`,
			`{"sessionId":"gw","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read","status":"pending","rawInput":{"path":"/a"},"extra":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewContext(Config{SessionID: "gw"})
			c.BeginTurn("T")
			u := mustUpdate(t, c, tt.in)
			if string(u.Params) != tt.want {
				t.Fatalf("got  %s\nwant %s", u.Params, tt.want)
			}
		})
	}
}

func TestUpdateKindAndText(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	u := mustUpdate(t, c, chunk("agent_message_chunk", "a \"quoted\" \u00e9 line\n"))
	if u.Kind != "agent_message_chunk" || u.Text != "a \"quoted\" \u00e9 line\n" {
		t.Fatalf("%+v", u)
	}
	if u := mustUpdate(t, c, chunk("agent_thought_chunk", "hmm")); u.Text != "" || u.Kind != "agent_thought_chunk" {
		t.Fatalf("thought text leaked into Text: %+v", u)
	}
	u = mustUpdate(t, c, `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}}`)
	if u.Text != "" {
		t.Fatalf("image gave text %q", u.Text)
	}
	if u := mustUpdate(t, c, `{"sessionId":"s","update":{"sessionUpdate":"x_\u0061"}}`); u.Kind != "x_a" {
		t.Fatalf("escaped kind: %q", u.Kind)
	}
}

func TestUpdateRejectsMalformed(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	for _, p := range []string{``, `[]`, `{"sessionId":"s"}`, `{"update":null}`, `{"update":"x"}`, `{"update":{"a":}}`, `{"update":{}} x`} {
		if _, err := c.Update([]byte(p)); err == nil {
			t.Errorf("%q: want error", p)
		}
	}
}

func TestMessageIDs(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	id := func(p string) string { return str(t, mustUpdate(t, c, p).Params, "update", "messageId") }

	c.BeginTurn("T1")
	th1 := id(chunk("agent_thought_chunk", "think"))
	th2 := id(chunk("agent_thought_chunk", "ing"))
	a1 := id(chunk("agent_message_chunk", "Hello"))
	a2 := id(chunk("agent_message_chunk", " world"))
	if th1 != th2 || a1 != a2 {
		t.Fatalf("chunks of one message must share an id: %s %s %s %s", th1, th2, a1, a2)
	}
	if th1 == a1 {
		t.Fatal("a thought and the answer must be different messages")
	}
	if !strings.HasPrefix(a1, "T1-") {
		t.Fatalf("id %q not scoped to the turn", a1)
	}
	mustUpdate(t, c, `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t"}}`)
	a3 := id(chunk("agent_message_chunk", "after the tool"))
	if a3 == a1 {
		t.Fatal("a tool call ends the message being streamed")
	}
	// plan and usage do not interrupt a message
	mustUpdate(t, c, `{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}`)
	if a4 := id(chunk("agent_message_chunk", "more")); a4 != a3 {
		t.Fatalf("plan split the message: %s vs %s", a4, a3)
	}
	// an agent-supplied id is kept, and the next id-less chunk starts a new message
	if got := id(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":"agent-m"}}`); got != "agent-m" {
		t.Fatalf("agent id replaced: %s", got)
	}
	if a5 := id(chunk("agent_message_chunk", "y")); a5 == a3 || a5 == "agent-m" {
		t.Fatalf("after an agent id: %s", a5)
	}
	// null messageId is replaced, not duplicated
	p := mustUpdate(t, c, `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"text","text":"z"}}}`).Params
	if strings.Count(string(p), "messageId") != 1 || str(t, p, "update", "messageId") == "" {
		t.Fatalf("null messageId: %s", p)
	}
	seen := map[string]bool{th1: true, a1: true, a3: true}
	c.EndTurn("")

	c.BeginTurn("T1") // even a repeated turn id never reuses a message id
	for _, k := range []string{"agent_thought_chunk", "agent_message_chunk"} {
		got := id(chunk(k, "again"))
		if seen[got] {
			t.Fatalf("id %s reused across turns", got)
		}
	}
	c.EndTurn("")
	if got := id(chunk("agent_message_chunk", "between turns")); !strings.HasPrefix(got, "noturn-") {
		t.Fatalf("out-of-turn id %s", got)
	}
}

func TestForwardedUpdatesValidate(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 64, Redact: true})
	c.BeginTurn("T")
	for _, p := range []string{
		chunk("agent_message_chunk", "hi"),
		chunk("agent_thought_chunk", "hm"),
		chunk("user_message_chunk", "me"),
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Run sk-abcdefghijklmnopqrstuvwx","kind":"execute","status":"pending","rawInput":{"command":"` + strings.Repeat("x", 500) + `"},"content":[{"type":"content","content":{"type":"text","text":"` + strings.Repeat("y", 500) + `"}},{"type":"diff","path":"/a","newText":"n"}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":[` + strings.Repeat(`"abc",`, 100) + `"z"]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":10,"cost":{"amount":0,"currency":"USD"}}}`,
	} {
		forwardedValid(t, mustUpdate(t, c, p).Params)
	}
	for _, p := range c.EndTurn("cancelled") {
		originatedValid(t, p)
	}
}
