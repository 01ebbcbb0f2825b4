package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpschema"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// step is one call a caller makes on its Context. Exactly one field is set.
type step struct {
	Begin    string // BeginTurn
	Line     string // ApplyLine
	Cancel   bool
	End      *string  // EndTurn(status)
	Decision []string // PermissionDecision(id, result, err): [id, result] or [id, "", errText]
}

func ln(s string) step    { return step{Line: s} }
func begin(s string) step { return step{Begin: s} }
func endTurn(status string) step {
	return step{End: &status}
}

type record struct {
	Step       string            `json:"step"`
	Out        []json.RawMessage `json:"out,omitempty"`
	Permission json.RawMessage   `json:"permission,omitempty"`
	Decision   json.RawMessage   `json:"decision,omitempty"`
	Stop       string            `json:"stopReason,omitempty"`
	Note       string            `json:"note,omitempty"`
}

func validUpdate(t testing.TB, p []byte) {
	t.Helper()
	if err := acpschema.ValidateParams(acpschema.Unstable, "session/update", p); err != nil {
		t.Errorf("update %s: %v", p, err)
	}
}

func validPermission(t testing.TB, p []byte) {
	t.Helper()
	if err := acpschema.ValidateParams(acpschema.Unstable, "session/request_permission", p); err != nil {
		t.Errorf("permission %s: %v", p, err)
	}
}

// run applies steps and returns the records; every produced params object is schema-validated.
func run(t testing.TB, c *Context, steps []step) []record {
	t.Helper()
	var recs []record
	for _, s := range steps {
		var r record
		switch {
		case s.Begin != "":
			c.BeginTurn(s.Begin)
			r.Step = "BeginTurn " + s.Begin
		case s.Cancel:
			c.Cancel()
			r.Step = "Cancel"
		case s.End != nil:
			out, stop := c.EndTurn(*s.End)
			r.Step, r.Stop = "EndTurn "+*s.End, stop
			for _, p := range out {
				validUpdate(t, p)
				r.Out = append(r.Out, p)
			}
		case s.Decision != nil:
			var err error
			var res json.RawMessage
			if len(s.Decision) > 2 {
				err = errors.New(s.Decision[2])
			} else {
				res = json.RawMessage(s.Decision[1])
			}
			d := c.PermissionDecision(s.Decision[0], res, err)
			r.Step = "PermissionDecision " + strings.Join(s.Decision[1:], " ")
			r.Decision = d.Line()
		default:
			line := s.Line
			if len(line) > 200 {
				line = line[:200] + "…"
			}
			r.Step = line
			res := c.ApplyLine([]byte(s.Line))
			for _, p := range res.Updates {
				if !json.Valid(p) {
					t.Fatalf("invalid JSON %s", p)
				}
				validUpdate(t, p)
				r.Out = append(r.Out, p)
			}
			if res.Permission != nil {
				validPermission(t, res.Permission.Params)
				r.Permission = res.Permission.Params
			}
			if res.Done {
				r.Stop = res.StopReason
			}
			var notes []string
			if res.Malformed {
				notes = append(notes, "malformed")
			}
			if res.Ignored {
				notes = append(notes, "ignored")
			}
			r.Note = strings.Join(notes, " ")
		}
		recs = append(recs, r)
	}
	return recs
}

func golden(t *testing.T, name string, cfg Config, steps []step) *Context {
	t.Helper()
	c := NewContext(cfg)
	recs := run(t, c, steps)
	doc := struct {
		Steps []record `json:"steps"`
		Stats Stats    `json:"stats"`
	}{recs, c.Stats()}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return c
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/translate/events -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (run with -update and review the diff):\n%s", path, got)
	}
	return c
}

func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A full turn of the dialect: thoughts, plan, a tool call with locations, its result, a failed command,
// permission, usage, a warning, streamed answer, the final repeat dropped, done.
func TestGoldenFullTurn(t *testing.T) {
	steps := []step{
		begin("t1"),
		ln(`{"type":"reasoning_delta","text":"The user wants "}`),
		ln(`{"type":"reasoning_delta","text":"a README check."}`),
		ln(`{"type":"plan","entries":[{"content":"Read README","priority":"HIGH","status":"in_progress"},{"content":"  ","priority":"urgent"},{"content":"Summarise","status":"done?"}]}`),
		ln(`{"type":"tool_call","id":"t1","name":"read_file","args":{"path":"README.md","line":3}}`),
		ln(`{"type":"tool_result","id":"t1","ok":true,"output":"# Project\n","durationMs":12}`),
		ln(`{"type":"tool_call","id":"t2","name":"bash","args":{"command":"go test ./... -run 'TestSomethingVeryLongNamedThatGoesOnAndOn' -count=1 -v"}}`),
		ln(`{"type":"tool_result","id":"t2","ok":true,"exitCode":1,"output":"FAIL\n"}`),
		ln(`{"type":"tool_call","id":"t3","name":"fetch","args":{"url":"https://example.com"}}`),
		ln(`{"type":"tool_result","id":"t3","ok":false,"error":{"kind":"io","message":"connection refused"}}`),
		ln(`{"type":"permission_request","id":"p1","tool":"write_file","args":{"path":"notes.md","content":"hi"},"reason":"Update the notes","toolCallId":"t4"}`),
		{Decision: []string{"p1", `{"outcome":{"outcome":"selected","optionId":"allow_once"}}`}},
		ln(`{"type":"usage","used":1200,"size":200000,"cost":{"amount":0.01,"currency":"USD"}}`),
		ln(`{"type":"usage","used":-1,"size":200000}`),
		ln(`{"type":"usage","used":1.5,"size":200000}`),
		ln(`{"type":"warning","id":"w1","message":"rate limited","provider":"openai"}`),
		ln(`{"type":"warning","id":"w1","message":"rate limited again","provider":"openai"}`),
		ln(`{"type":"text_delta","text":"The README "}`),
		ln(`{"type":"text_delta","text":"says hello."}`),
		ln(`{"type":"assistant_message","text":"The README says hello."}`),
		ln(`{"type":"something_new","x":1}`),
		ln(`not json at all`),
		ln(`{"type":"done","status":"done","turnId":"t1"}`),
	}
	golden(t, "full_turn", Config{SessionID: "s1", Cwd: "/work/p"}, steps)
}

// Deltas and finals: suffix only, exact repeat, final shorter than the stream, divergent final, the
// no-deltas fallback, done.answer against the whole turn, and no fallback to a previous turn's text.
func TestGoldenFinals(t *testing.T) {
	steps := []step{
		begin("suffix"),
		ln(`{"type":"text_delta","text":"Hello"}`),
		ln(`{"type":"assistant_message","text":"Hello, world."}`),
		ln(`{"type":"done","status":"done"}`),
		begin("repeat"),
		ln(`{"type":"text_delta","text":"Same "}`),
		ln(`{"type":"text_delta","text":"text"}`),
		ln(`{"type":"assistant_message","text":"Same text"}`),
		ln(`{"type":"assistant_message","text":"Same text"}`),
		ln(`{"type":"done","status":"done"}`),
		begin("shorter"),
		ln(`{"type":"text_delta","text":"Answer.\n"}`),
		ln(`{"type":"assistant_message","text":"Answer."}`),
		ln(`{"type":"done","status":"done"}`),
		begin("divergent"),
		ln(`{"type":"text_delta","text":"The answer is 41"}`),
		ln(`{"type":"assistant_message","text":"The answer is 42."}`),
		ln(`{"type":"done","status":"done"}`),
		begin("fallback"),
		ln(`{"type":"tool_call","id":"t1","name":"grep","args":{"pattern":"x"}}`),
		ln(`{"type":"tool_result","id":"t1","ok":true,"output":{"matches":3}}`),
		ln(`{"type":"assistant_message","text":"Found 3 matches."}`),
		ln(`{"type":"done","status":"done"}`),
		begin("steps"),
		ln(`{"type":"text_delta","text":"Step one."}`),
		ln(`{"type":"assistant_message","text":"Step one."}`),
		ln(`{"type":"text_delta","text":" Step two."}`),
		ln(`{"type":"assistant_message","text":" Step two."}`),
		ln(`{"type":"done","status":"done","answer":"Step one. Step two. Done."}`),
		begin("rlmx"),
		ln(`{"type":"iteration_output","text":"iteration 1: thinking"}`),
		ln(`{"type":"done","status":"done","answer":"42"}`),
		begin("empty"),
		ln(`{"type":"done","status":"done"}`),
	}
	golden(t, "finals", Config{SessionID: "s1"}, steps)
}

func warnings(n int) []step {
	steps := []step{begin("t")}
	for i := range n {
		steps = append(steps, ln(`{"type":"warning","id":"w`+itoa(i)+`","message":"m`+itoa(i)+`","provider":"p"}`))
	}
	return append(steps, ln(`{"type":"warning","id":"w0","message":"duplicate"}`), ln(`{"type":"done","status":"done"}`))
}

func itoa(i int) string { return strings.TrimSpace(string(marshal(i))) }

// 255, 256 and 257 warnings: the cap is 256 per turn; only 257 gets the summary.
func TestGoldenWarnings(t *testing.T) {
	for _, n := range []int{255, 256, 257} {
		t.Run(itoa(n), func(t *testing.T) {
			c := NewContext(Config{SessionID: "s"})
			recs := run(t, c, warnings(n))
			sent := 0
			var summary []json.RawMessage
			for _, r := range recs[1 : len(recs)-1] {
				sent += len(r.Out)
			}
			summary = recs[len(recs)-1].Out
			if sent != min(n, 256) {
				t.Errorf("%d warnings sent, want %d", sent, min(n, 256))
			}
			if n <= 256 && len(summary) != 0 {
				t.Errorf("summary for %d warnings: %s", n, summary)
			}
			if n > 256 {
				if len(summary) != 1 {
					t.Fatalf("want one summary, got %s", summary)
				}
				want := `{"sessionId":"s","update":{"sessionUpdate":"session_info_update","_meta":{"events":{"warningSummary":{"warningCount":257,"warningsShown":256,"warningsTruncated":true}}}}}`
				if string(summary[0]) != want {
					t.Errorf("summary %s\nwant    %s", summary[0], want)
				}
			}
		})
	}
	// The golden file keeps the edges of the 257 case: the first warning, the 256th, the dropped 257th and
	// the summary.
	steps := warnings(257)
	golden(t, "warnings_257_edges", Config{SessionID: "s", MaxWarnings: 2}, append(steps[:4:4], steps[len(steps)-2:]...))
}

// Cancel racing a terminal status: the cancel wins over a done that slipped in; interrupted is cancelled;
// error and timeout are end_turn with the failure as content; a stale done is ignored.
func TestGoldenStopReasons(t *testing.T) {
	steps := []step{
		begin("race"),
		ln(`{"type":"text_delta","text":"Partial"}`),
		{Cancel: true},
		ln(`{"type":"done","status":"done"}`),
		begin("race-pending-permission"),
		ln(`{"type":"permission_request","id":"p1","tool":"bash","args":{"command":"rm -rf build"}}`),
		{Cancel: true},
		{Decision: []string{"p1", `{"outcome":{"outcome":"selected","optionId":"allow_once"}}`}},
		ln(`{"type":"done","status":"interrupted"}`),
		begin("interrupted"),
		ln(`{"type":"done","status":"interrupted"}`),
		begin("error"),
		ln(`{"type":"done","status":"error","message":"model overloaded"}`),
		begin("timeout"),
		ln(`{"type":"done","status":"timeout"}`),
		begin("stale"),
		ln(`{"type":"done","status":"done","turnId":"timeout"}`),
		endTurn(""),
		ln(`{"type":"done","status":"done"}`),
		begin("gave-up"),
		{Cancel: true},
		endTurn(""),
	}
	golden(t, "stop_reasons", Config{SessionID: "s"}, steps)
}

// Permission decisions: only the explicit allow allows.
func TestGoldenPermissions(t *testing.T) {
	ask := func(id string) step {
		return ln(`{"type":"permission_request","id":"` + id + `","tool":"edit_file","args":{"path":"/etc/passwd"},"reason":"because"}`)
	}
	steps := []step{
		begin("t"),
		ask("allow"), {Decision: []string{"allow", `{"outcome":{"outcome":"selected","optionId":"allow_once"}}`}},
		ask("reject"), {Decision: []string{"reject", `{"outcome":{"outcome":"selected","optionId":"reject_once"}}`}},
		ask("cancelled"), {Decision: []string{"cancelled", `{"outcome":{"outcome":"cancelled"}}`}},
		ask("unknown-option"), {Decision: []string{"unknown-option", `{"outcome":{"outcome":"selected","optionId":"allow_always"}}`}},
		ask("malformed"), {Decision: []string{"malformed", `{"outcome":"yes"}`}},
		ask("error"), {Decision: []string{"error", "", "connection closed"}},
		{Decision: []string{"never-asked", `{"outcome":{"outcome":"selected","optionId":"allow_once"}}`}},
		{Decision: []string{"allow", `{"outcome":{"outcome":"selected","optionId":"allow_once"}}`}},
		ln(`{"type":"permission_request","tool":"x"}`),
		ln(`{"type":"done","status":"done"}`),
	}
	golden(t, "permissions", Config{SessionID: "s", Cwd: "/work/p"}, steps)
}

// Locations: only from a structured path inside the cwd; `..`, sibling prefixes and symlinks out are
// dropped, prose is never mined. The resolver is a fake filesystem.
func TestGoldenLocations(t *testing.T) {
	links := map[string]string{
		"/work/p":            "/work/p",
		"/work/p/src":        "/work/p/src",
		"/work/p/src/a.go":   "/work/p/src/a.go",
		"/work/p/escape":     "/etc",
		"/work/p/inner-link": "/work/p/src",
	}
	resolve := func(p string) (string, error) {
		if r, ok := links[p]; ok {
			return r, nil
		}
		return "", os.ErrNotExist
	}
	call := func(id, args string) step {
		return ln(`{"type":"tool_call","id":"` + id + `","name":"read_file","args":` + args + `}`)
	}
	steps := []step{
		begin("t"),
		call("rel", `{"path":"src/a.go"}`),
		call("abs", `{"path":"/work/p/src/a.go","line":10}`),
		call("new-file", `{"path":"src/new/b.go"}`),
		call("dotdot", `{"path":"../secret"}`),
		call("dotdot-inside", `{"path":"src/../src/a.go"}`),
		call("sibling", `{"path":"/work/p-other/x"}`),
		call("symlink-out", `{"path":"escape/passwd"}`),
		call("symlink-in", `{"path":"inner-link/a.go"}`),
		call("prose", `{"text":"please read /work/p/src/a.go"}`),
		call("not-a-string", `{"path":["src/a.go"]}`),
		call("cwd-itself", `{"path":"."}`),
		ln(`{"type":"done","status":"done"}`),
	}
	golden(t, "locations", Config{SessionID: "s", Cwd: "/work/p", Resolve: resolve}, steps)
	// Without a resolver the symlink escape cannot be seen: lexical only (documented default).
	c := NewContext(Config{SessionID: "s", Cwd: "/work/p"})
	c.BeginTurn("t")
	res := c.ApplyLine([]byte(`{"type":"tool_call","id":"x","name":"read","args":{"path":"escape/passwd"}}`))
	if !bytes.Contains(res.Updates[0], []byte(`"locations"`)) {
		t.Errorf("lexical-only should keep the location: %s", res.Updates[0])
	}
}

// A subagent seen in turn 1 is updated in turn 2 without a second tool_call; its exact status is kept in
// rawOutput._meta. Recursion nodes are keyed by correlation id; errors on known nodes fail them.
func TestGoldenNodes(t *testing.T) {
	steps := []step{
		begin("t1"),
		ln(`{"type":"subagent","id":"s1","name":"researcher","status":"running","summary":"Looking up docs"}`),
		ln(`{"type":"subagent","id":"s1","name":"researcher","status":"detached"}`),
		ln(`{"type":"recurse","correlationId":"c1","parentRunId":"r0","depth":1,"prompt":"Summarise chapter one of the very long book about recursion and its discontents"}`),
		ln(`{"type":"recurse","correlationId":"c2","parentRunId":"c1","depth":2,"prompt":"Count words"}`),
		ln(`{"type":"iteration_output","text":"root iteration text"}`),
		ln(`{"type":"iteration_output","correlationId":"c2","text":"1234 words","metrics":{"latencyMs":1200,"costUsd":0.0031,"tokens":{"input":800,"output":50}}}`),
		ln(`{"type":"error","nodeId":"c1","message":"child crashed"}`),
		ln(`{"type":"error","nodeId":"nope","message":"unknown node"}`),
		ln(`{"type":"error","message":"root failure","kind":"provider"}`),
		ln(`{"type":"done","status":"done"}`),
		begin("t2"),
		ln(`{"type":"subagent","id":"s1","status":"timed_out","summary":"Gave up after 60s"}`),
		ln(`{"type":"subagent","id":"s2","status":"weird_status"}`),
		ln(`{"type":"iteration_output","correlationId":"c1","text":"late completion of c1"}`),
		ln(`{"type":"done","status":"done"}`),
	}
	golden(t, "nodes", Config{SessionID: "s"}, steps)
}

// Tool pairing: ids, FIFO per run for id-less results, unmatched results skipped, titles and kinds.
func TestGoldenToolPairing(t *testing.T) {
	steps := []step{
		begin("t"),
		ln(`{"type":"tool_call","name":"bash","args":{"command":["ls","-la"]}}`),
		ln(`{"type":"tool_call","name":"cat","runId":"child","args":{"path":"a.txt"}}`),
		ln(`{"type":"tool_call","name":"grep","args":{"pattern":"x"}}`),
		ln(`{"type":"tool_result","ok":true,"output":"first"}`),
		ln(`{"type":"tool_result","ok":true,"output":"second"}`),
		ln(`{"type":"tool_result","ok":true,"output":"unmatched: root FIFO is empty"}`),
		ln(`{"type":"tool_result","runId":"child","ok":true,"output":"child result"}`),
		ln(`{"type":"tool_result","id":"ghost","ok":true}`),
		ln(`{"type":"tool_call","id":"dup","name":"WebSearch","args":{"query":"acp"}}`),
		ln(`{"type":"tool_call","id":"dup","name":"WebSearch","args":{"query":"acp protocol"}}`),
		ln(`{"type":"tool_result","id":"dup","ok":true}`),
		ln(`{"type":"tool_result","id":"dup","ok":true}`),
		ln(`{"type":"tool_call","id":"noname","args":{}}`),
		ln(`{"type":"tool_call","id":"mv","name":"rename_file","args":{"path":"a","to":"b"}}`),
		ln(`{"type":"tool_call","id":"rm","name":"delete","args":{"path":"a"}}`),
		ln(`{"type":"tool_call","id":"think","name":"think"}`),
		ln(`{"type":"done","status":"done"}`),
	}
	golden(t, "tool_pairing", Config{SessionID: "s"}, steps)
}

// Bounds and redaction: a big tool output is cut with a marker, secrets in args, output, titles and
// warnings are redacted, message text is not.
func TestGoldenBoundAndRedact(t *testing.T) {
	big := strings.Repeat("build output line, nothing to see\n", 40) + "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n"
	steps := []step{
		begin("t"),
		ln(`{"type":"text_delta","text":"my key is sk-abcdefghijklmnopqrstuvwxyz in the answer"}`),
		ln(`{"type":"tool_call","id":"c","name":"bash","args":{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop1234' https://x","password":"hunter2"}}`),
		ln(`{"type":"tool_result","id":"c","ok":true,"output":` + jsonStr(big) + `}`),
		ln(`{"type":"warning","id":"w","message":"invalid key ghp_abcdefghijklmnopqrstuvwxyz0123456789","provider":"github"}`),
		ln(`{"type":"done","status":"done"}`),
	}
	golden(t, "bound_and_redact", Config{SessionID: "s", MaxFieldBytes: 300}, steps)
}
