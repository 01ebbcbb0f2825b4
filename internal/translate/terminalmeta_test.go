package translate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func termOutput(id, data string) string {
	d, _ := json.Marshal(data)
	return `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"b1","_meta":{"terminal_output":{"terminal_id":"` + id + `","data":` + string(d) + `}}}}`
}

// mergedTerminalData is the terminal output the merged tool call (snapshot, permission requests) holds.
func mergedTerminalData(t *testing.T, c *Context) string {
	t.Helper()
	return str(t, c.PermissionToolCall(json.RawMessage(`{"toolCallId":"b1"}`)), "_meta", "terminal_output", "data")
}

// TestTerminalMetaPassesThrough: the `_meta.terminal_*` fields claude-agent-acp sends for a Bash call when the
// client advertises `_meta.terminal_output` reach clients as sent — escape sequences and markup included,
// for the UI to neutralise — with only the session id rewritten.
func TestTerminalMetaPassesThrough(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 64 << 10, Redact: true})
	c.BeginTurn("T")
	for _, p := range []string{
		`{"sessionId":"a","update":{"_meta":{"claudeCode":{"toolName":"Bash"},"terminal_info":{"terminal_id":"b1"}},"toolCallId":"b1","sessionUpdate":"tool_call","rawInput":{"command":"printf x"},"status":"pending","title":"printf x","kind":"execute","content":[{"type":"terminal","terminalId":"b1"}]}}`,
		`{"sessionId":"a","update":{"_meta":{"terminal_output":{"terminal_id":"b1","data":"\u001b]0;title\u0007\u001b[31mred\u001b[0m <script>x</script>\r\n"}},"toolCallId":"b1","sessionUpdate":"tool_call_update"}}`,
		`{"sessionId":"a","update":{"_meta":{"claudeCode":{"toolName":"Bash"},"terminal_exit":{"terminal_id":"b1","exit_code":0,"signal":null}},"toolCallId":"b1","sessionUpdate":"tool_call_update","status":"completed","rawOutput":"red"}}`,
	} {
		u := mustUpdate(t, c, p)
		if want := strings.Replace(p, `"sessionId":"a"`, `"sessionId":"gw"`, 1); string(u.Params) != want {
			t.Errorf("forwarded\n got  %s\n want %s", u.Params, want)
		}
	}
	merged := c.PermissionToolCall(json.RawMessage(`{"toolCallId":"b1"}`))
	if got := string(field(t, merged, "_meta")); got != `{"terminal_info":{"terminal_id":"b1"},"terminal_output":{"terminal_id":"b1","data":"\u001b]0;title\u0007\u001b[31mred\u001b[0m <script>x</script>\r\n"},"claudeCode":{"toolName":"Bash"},"terminal_exit":{"terminal_id":"b1","exit_code":0,"signal":null}}` {
		t.Errorf("merged _meta %s", got)
	}
}

// TestTerminalOutputAccumulates: each update's `terminal_output.data` is new output (codex-acp streams a
// command's output in many updates; clients append). The merged state keeps all of it, not the last chunk,
// so a client that renders a snapshot sees the whole output; a new terminal id starts over.
func TestTerminalOutputAccumulates(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 64 << 10})
	c.BeginTurn("T")
	for _, d := range []string{"one\r\n", "\u001b[32mtwo\u001b[0m\r\n", "é\"three\"\n"} {
		u := mustUpdate(t, c, termOutput("b1", d))
		if got := str(t, u.Params, "update", "_meta", "terminal_output", "data"); got != d {
			t.Errorf("forwarded data %q, want the update's own %q", got, d)
		}
	}
	if got, want := mergedTerminalData(t, c), "one\r\n\u001b[32mtwo\u001b[0m\r\né\"three\"\n"; got != want {
		t.Fatalf("merged data %q, want %q", got, want)
	}
	mustUpdate(t, c, termOutput("b2", "other"))
	if got := mergedTerminalData(t, c); got != "other" {
		t.Fatalf("merged data %q after a new terminal id, want %q", got, "other")
	}
}

// TestTerminalOutputAccumulatedBounded: the accumulated output is bounded to the snapshot's per-field bound,
// keeping its end (a terminal shows its last lines) behind a marker, never splitting an escape or a UTF-8
// sequence.
func TestTerminalOutputAccumulatedBounded(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 64 << 10, SnapshotMaxMessageBytes: 1000})
	c.BeginTurn("T")
	line := "é\u001b[1mline\u001b[0m\n"
	for i := 0; i < 200; i++ {
		mustUpdate(t, c, termOutput("b1", line))
	}
	merged := c.PermissionToolCall(json.RawMessage(`{"toolCallId":"b1"}`))
	if !json.Valid(merged) {
		t.Fatalf("invalid JSON %s", merged)
	}
	got := mergedTerminalData(t, c)
	if !strings.HasPrefix(got, "…[gateway: truncated") || !strings.HasSuffix(got, strings.Repeat(line, 20)) {
		t.Fatalf("bounded data %q", got)
	}
	if raw := field(t, merged, "_meta", "terminal_output", "data"); len(raw) > 1100 {
		t.Fatalf("bounded data is %d bytes", len(raw))
	}
}

// metaUpdate is a tool_call_update of call id carrying the given raw `_meta` (and extra members).
func metaUpdate(id, meta, extra string) string {
	return `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"` + id + `"` + extra + `,"_meta":` + meta + `}}`
}

// TestGoldenTerminalMeta: the merged state (snapshot, replay, permission requests, a Context restored from the
// log) of tool calls whose `_meta` streams terminal output the way claude-agent-acp and codex-acp do, below
// the bound: appended per terminal id, restarted by a new id or a non-string data, kept across updates
// without terminal_output, and under the gateway's closer.
func TestGoldenTerminalMeta(t *testing.T) {
	out := func(id, tid, data string) step {
		d, _ := json.Marshal(data)
		return step{Update: metaUpdate(id, `{"terminal_output":{"terminal_id":"`+tid+`","data":`+string(d)+`}}`, "")}
	}
	steps := []step{
		{Begin: "t1"},
		{Update: `{"sessionId":"a","update":{"_meta":{"claudeCode":{"toolName":"Bash"},"terminal_info":{"terminal_id":"b1"}},"toolCallId":"b1","sessionUpdate":"tool_call","rawInput":{"command":"make"},"status":"pending","title":"make","kind":"execute","content":[{"type":"terminal","terminalId":"b1"}]}}`},
		out("b1", "b1", "one\r\n"),
		out("b1", "b1", "\u001b[32mtwo\u001b[0m \"quoted\" back\\slash\r\n"),
		{Permission: `{"toolCallId":"b1","title":"make"}`},
		out("b1", "b1", "é ü 😀 \u0007\u001b]0;title\u0007 three\n"),
		{Update: metaUpdate("b1", `{"claudeCode":{"toolName":"Bash"},"terminal_exit":{"terminal_id":"b1","exit_code":0,"signal":null}}`, `,"status":"completed"`)},
		out("b1", "b1", "late output after the exit\n"),
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c2","title":"codex exec","kind":"execute","status":"in_progress","_meta":{"terminal_info":{"terminal_id":"x1"}}}}`},
		out("c2", "x1", "first terminal\n"),
		out("c2", "x1", "more\n"),
		out("c2", "x2", "a new terminal id starts over\n"),
		out("c2", "x2", "and goes on\n"),
		{Update: metaUpdate("c2", `{"terminal_output":{"terminal_id":"x2","data":42}}`, "")},
		out("c2", "x2", "after a non-string data\n"),
		{Update: metaUpdate("c2", `{"other":{"k":1}}`, "")},
		out("c2", "x2", "still appended\n"),
		{Update: metaUpdate("c2", `{"terminal_output":{"data":"no id"}}`, "")},
		{Update: metaUpdate("c2", `{"terminal_output":{"data":" and none again"}}`, "")},
		{Update: metaUpdate("c2", `{"terminal_output":{"terminal_id":"x3","data":"x3 "},"terminal_exit":{"terminal_id":"x3","exit_code":1,"signal":null}}`, `,"status":"failed"`)},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c3","title":"sleep","kind":"execute","status":"in_progress"}}`},
		out("c3", "s1", "waiting…\n"),
		out("c3", "s1", "still waiting…\n"),
		{Permission: `{"toolCallId":"c3","_meta":{"terminal_output":{"terminal_id":"s1","data":"from the request"}}}`},
		end("cancelled"),
		{Note: [2]string{"_gateway/turn_ended", `{"turnId":"t1","stopReason":"cancelled"}`}},
	}
	runScenario(t, "terminal_meta", Config{SessionID: "gw-6", MaxFieldBytes: 64 << 10}, steps)
}

// TestGoldenTerminalMetaCut: the accumulated output crossing its bound once is cut at the start behind a
// marker that counts the bytes left out, never inside an escape or a UTF-8 sequence.
func TestGoldenTerminalMetaCut(t *testing.T) {
	steps := []step{{Begin: "t1"}}
	for i := range 7 { // 17, 28, … 83 bytes: 350 in all, past the bound on the last
		d, _ := json.Marshal(strings.Repeat("é\u001b[1m", i+1) + "line\n")
		steps = append(steps, step{Update: metaUpdate("b1", `{"terminal_output":{"terminal_id":"b1","data":`+string(d)+`}}`, "")})
	}
	steps = append(steps, end(""))
	runScenario(t, "terminal_meta_cut", Config{SessionID: "gw-7", SnapshotMaxMessageBytes: 300}, steps)
}

// TestTerminalOutputCutCountsEverything: however many times the accumulated output is cut, the merged data is
// the exact end of everything the agent sent, behind one marker counting every byte left out (the raw JSON
// body's bytes), so marker and tail add up to the whole; the live updates stay as sent. A frozen snapshot
// keeps what it saw while more output arrives.
func TestTerminalOutputCutCountsEverything(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 64 << 10, SnapshotMaxMessageBytes: 500})
	c.BeginTurn("T")
	var all strings.Builder
	var frozen *SnapshotView
	var frozenJSON string
	for i := range 300 {
		d := strings.Repeat("é\u001b[1m\\", i%7) + "line " + strings.Repeat("x", i%13) + "\n"
		all.WriteString(d)
		u := mustUpdate(t, c, termOutput("b1", d))
		if got := str(t, u.Params, "update", "_meta", "terminal_output", "data"); got != d {
			t.Fatalf("forwarded data %q, want %q", got, d)
		}
		if i == 100 {
			frozen = c.FreezeSnapshot(7)
			frozenJSON = string(frozen.JSON())
		}
	}
	raw := string(field(t, c.PermissionToolCall(json.RawMessage(`{"toolCallId":"b1"}`)), "_meta", "terminal_output", "data"))
	body := raw[1 : len(raw)-1]
	allRaw, _ := json.Marshal(all.String())
	whole := string(allRaw[1 : len(allRaw)-1])
	var omitted int
	var kept string
	if _, err := fmt.Sscanf(body, "…[gateway: truncated %d bytes]", &omitted); err != nil {
		t.Fatalf("no marker in %q: %v", body, err)
	}
	kept = body[strings.Index(body, " bytes]")+len(" bytes]"):]
	if omitted+len(kept) != len(whole) || !strings.HasSuffix(whole, kept) || len(kept) > 500 || len(kept) < 500-12 {
		t.Fatalf("marker says %d bytes left out and %d kept, of %d sent; kept %q", omitted, len(kept), len(whole), kept)
	}
	if got := string(frozen.JSON()); got != frozenJSON {
		t.Fatalf("a frozen snapshot changed after more output:\n was %s\n now %s", frozenJSON, got)
	}
	if got, want := string(c.Snapshot(7)), string(c.FreezeSnapshot(7).JSON()); got != want || !strings.Contains(got, kept) {
		t.Fatalf("snapshot %s", got)
	}
}
