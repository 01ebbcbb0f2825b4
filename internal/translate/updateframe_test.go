package translate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// frameInputs cover every layout of params-level `_meta` (none, plain, whitespace, agent `gateway` key,
// duplicates, not an object, malformed inside), id-less and id'd chunks, tool calls and unknown variants.
var frameInputs = []string{
	chunk("agent_message_chunk", "hi"),
	chunk("agent_message_chunk", "a \"quoted\" \u00e9 line\n"),
	chunk("agent_thought_chunk", "hmm"),
	`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":"m-1"}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"text","text":"z"}}}`,
	`{"sessionId":"s","update":{"_meta":{"flood":{"i":1,"sentNs":2}},"content":{"text":"xx","type":"text"},"sessionUpdate":"agent_message_chunk"}}`,
	`{"update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}`,
	`{"_meta":{"traceparent":"00-ab"},"sessionId":"agent-s","update":{"sessionUpdate":"plan","entries":[],"_meta":{"k":1}}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{ }}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta" : {"a":1}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"a" : 1,"b":[1, 2]}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"a":1 ,"b":2}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"a":1, "b":2}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"a":1,"b":2 }}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"gateway":"spoof","z":2}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"z":2,"gateway":{"seq":1}}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":null}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":"x"}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"a"}}`,
	`{"_meta":{"a":1},"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"b":2}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"\u0067ateway":1}}`,
	` { "sessionId" : "s" , "update" : {"sessionUpdate":"brand_new_variant", "foo" : [1, {"x":null}],"bar":"\u00e9"} } `,
	`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read sk-abcdefghijklmnopqrstuvwx","status":"pending","rawInput":{"path":"/a","password":"p"}},"_meta":{"t":1}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"` + strings.Repeat("y", 300) + `"}}]}}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"_meta":{"x":1},"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"many"},"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13}}`,
}

// checkFrameMatches runs params through two Contexts in lockstep, the old way (Update, then
// AppendNotification) and UpdateFrame + Frame, and requires identical bytes, errors and text.
func checkFrameMatches(t *testing.T, a, b *Context, params []byte, m GatewayMeta, seq uint64) {
	t.Helper()
	u, errA := a.Update(params)
	f, errB := b.UpdateFrame(params, m)
	if (errA == nil) != (errB == nil) {
		t.Fatalf("%s: Update err %v, UpdateFrame err %v", params, errA, errB)
	}
	if errA != nil {
		return
	}
	if string(u.Params) != string(f.Params) || u.Kind != f.Kind || u.Truncated != f.Truncated {
		t.Fatalf("%s: params differ\nUpdate      %s\nUpdateFrame %s", params, u.Params, f.Params)
	}
	var sb strings.Builder
	f.WriteText(&sb, 0)
	if sb.String() != u.Text {
		t.Fatalf("%s: text %q, want %q", params, sb.String(), u.Text)
	}
	m.Seq, m.Truncated = seq, m.Truncated || u.Truncated
	want, errA := AppendNotification(nil, "session/update", u.Params, m)
	got, errB := f.Frame(seq)
	if (errA == nil) != (errB == nil) || !bytes.Equal(got, want) {
		t.Fatalf("%s:\ngot  %s (%v)\nwant %s (%v)", params, got, errB, want, errA)
	}
}

func TestUpdateFrameMatchesAppendNotification(t *testing.T) {
	for _, m := range []GatewayMeta{
		{Epoch: "0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e", TurnID: "3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9"},
		{Epoch: "e"},
		{Epoch: "e\u00e9\"", TurnID: "t\n", Truncated: true},
	} {
		cfg := Config{SessionID: "gw", MaxFieldBytes: 128, Redact: true}
		a, b := NewContext(cfg), NewContext(cfg)
		a.BeginTurn("T")
		b.BeginTurn("T")
		for i, p := range frameInputs {
			for _, seq := range []uint64{1, uint64(i) + 9, 1<<64 - 1} {
				checkFrameMatches(t, a, b, []byte(p), m, seq)
			}
		}
	}
}

func TestUpdateFrameAllocatesOnlyTheFrame(t *testing.T) {
	c := NewContext(Config{SessionID: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", MaxFieldBytes: 64 << 10, Redact: true})
	c.BeginTurn("3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9")
	m := GatewayMeta{Epoch: "0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e", TurnID: "3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9"}
	for _, p := range []string{
		`{"sessionId":"s","update":{"_meta":{"flood":{"i":1,"sentNs":2}},"content":{"text":"` + strings.Repeat("x", 256) + `","type":"text"},"sessionUpdate":"agent_message_chunk"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":"m-1"},"_meta":{"traceparent":"00-x"}}`,
	} {
		params := []byte(p)
		var sb strings.Builder
		sb.Grow(1 << 20)
		allocs := testing.AllocsPerRun(200, func() {
			f, err := c.UpdateFrame(params, m)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteText(&sb, 0)
			if _, err := f.Frame(12345); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 1 {
			t.Errorf("%s: %v allocations per update, want 1 (the frame)", p, allocs)
		}
	}
}

func FuzzUpdateFrame(f *testing.F) {
	for _, s := range frameInputs {
		f.Add([]byte(s), uint64(7))
	}
	f.Fuzz(func(t *testing.T, params []byte, seq uint64) {
		cfg := Config{SessionID: "gw", MaxFieldBytes: 40, Redact: true}
		a, b := NewContext(cfg), NewContext(cfg)
		a.BeginTurn("T")
		b.BeginTurn("T")
		m := GatewayMeta{Epoch: "e", TurnID: "t"}
		checkFrameMatches(t, a, b, params, m, seq)
		checkFrameMatches(t, a, b, params, m, seq+1) // the second time merges into state
		if json.Valid(params) {
			if got, err := b.UpdateFrame(params, m); err == nil {
				if fr, err := got.Frame(seq); err == nil && !json.Valid(fr) {
					t.Fatalf("valid %s produced invalid frame %s", params, fr)
				}
			}
		}
	})
}

// BenchmarkUpdateFrameChunk is the session's path per chunk: UpdateFrame, the turn text, Frame.
func BenchmarkUpdateFrameChunk(b *testing.B) {
	for _, bc := range []struct{ name, params string }{
		{"withMessageId", `{"sessionId":"0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me read the file to understand the structure of the project."},"messageId":"7b1c9e2a-3d4f-4a5b-8c6d-9e0f1a2b3c4d"}}`},
		{"withoutMessageId", `{"sessionId":"0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me read the file to understand the structure of the project."}}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := NewContext(Config{SessionID: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", MaxFieldBytes: 64 << 10, Redact: true})
			c.BeginTurn("3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9")
			m := GatewayMeta{Epoch: "0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e", TurnID: "3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9"}
			p := []byte(bc.params)
			var sb strings.Builder
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			seq := uint64(0)
			for b.Loop() {
				f, err := c.UpdateFrame(p, m)
				if err != nil {
					b.Fatal(err)
				}
				if f.WriteText(&sb, 0); sb.Len() > 1<<20 {
					sb.Reset()
				}
				seq++
				if _, err := f.Frame(seq); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpdateThenAppendNotification is what the session did per chunk before UpdateFrame: Update (params
// and text allocated), then AppendNotification into a new frame (scanning the params again).
func BenchmarkUpdateThenAppendNotification(b *testing.B) {
	c := NewContext(Config{SessionID: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", MaxFieldBytes: 64 << 10, Redact: true})
	c.BeginTurn("3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9")
	m := GatewayMeta{Epoch: "0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e", TurnID: "3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9"}
	p := []byte(`{"sessionId":"0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me read the file to understand the structure of the project."}}}`)
	var sb strings.Builder
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		u, err := c.Update(p)
		if err != nil {
			b.Fatal(err)
		}
		if sb.WriteString(u.Text); sb.Len() > 1<<20 {
			sb.Reset()
		}
		m.Seq++
		if _, err := AppendNotification(nil, "session/update", u.Params, m); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteTextBounded: the collected text never grows past the limit; a cut lands on a rune boundary, for
// plain and escaped JSON strings alike, and is reported.
func TestWriteTextBounded(t *testing.T) {
	for _, tc := range []struct {
		chunks    []string // JSON string literals
		limit     int
		want      string
		truncated bool
	}{
		{[]string{`"abc"`, `"def"`}, 6, "abcdef", false},
		{[]string{`"abc"`, `"def"`}, 5, "abcde", true},
		{[]string{`"ab"`, `"\u00e9\u00e9"`}, 5, "ab\u00e9", true},
		{[]string{`"ab"`, `"éé"`}, 5, "ab\u00e9", true},
		{[]string{`"a\nb"`, `"c"`}, 2, "a\n", true},
		{[]string{`"日本"`}, 2, "", true},
		{[]string{`"abc"`}, 0, "abc", false},
	} {
		c := NewContext(Config{SessionID: "s"})
		c.BeginTurn("T")
		var sb strings.Builder
		truncated := false
		for _, ch := range tc.chunks {
			f, err := c.UpdateFrame([]byte(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+ch+`}}}`), GatewayMeta{})
			if err != nil {
				t.Fatal(err)
			}
			truncated = f.WriteText(&sb, tc.limit) || truncated
		}
		if sb.String() != tc.want || truncated != tc.truncated {
			t.Errorf("%v limit %d: %q truncated %v, want %q %v", tc.chunks, tc.limit, sb.String(), truncated, tc.want, tc.truncated)
		}
	}
}
