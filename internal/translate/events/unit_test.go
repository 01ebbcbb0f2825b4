package events

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestToolKind(t *testing.T) {
	for name, want := range map[string]string{
		"read_file": "read", "ReadFile": "read", "cat": "read",
		"write_file": "edit", "apply_patch": "edit", "str_replace_editor": "edit", "Edit": "edit",
		"bash": "execute", "run_command": "execute", "shell": "execute",
		"grep": "search", "glob": "search", "list_dir": "search",
		"fetch": "fetch", "web_search": "fetch", "WebFetch": "fetch",
		"think": "think", "delete_file": "delete", "rm": "delete", "move_file": "move", "rename": "move",
		"": "other", "frobnicate": "other", "rlm_query": "search",
	} {
		if got := ToolKind(name); got != want {
			t.Errorf("ToolKind(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestToolTitle(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct{ name, args, want string }{
		{"read_file", `{"path":"src/a.go"}`, "read_file src/a.go"},
		{"bash", `{"command":"ls -la"}`, "bash: ls -la"},
		{"bash", `{"command":"` + long + `"}`, "bash: " + strings.Repeat("x", 51) + "..."},
		{"bash", `{"command":"echo a\n  echo b"}`, "bash: echo a echo b"},
		{"bash", `{"command":["git","status"]}`, "bash: git status"},
		{"grep", `{"pattern":"x"}`, "grep"},
		{"", `{}`, "tool"},
		{"", `null`, "tool"},
		{"x", `[1,2]`, "x"},
		{"édit", `{"command":"` + strings.Repeat("é", 100) + `"}`, "édit: " + strings.Repeat("é", 51) + "..."},
	} {
		got := toolTitle(tc.name, json.RawMessage(tc.args))
		if got != tc.want {
			t.Errorf("toolTitle(%q, %s) = %q, want %q", tc.name, tc.args, got, tc.want)
		}
		if utf8.RuneCountInString(got) > maxTitleRunes && strings.Contains(tc.args, "command") {
			t.Errorf("title %q longer than %d runes", got, maxTitleRunes)
		}
	}
}

func TestSubagentStatus(t *testing.T) {
	for s, want := range map[string]string{
		"running": "in_progress", "": "in_progress", "queued": "in_progress", "weird": "in_progress",
		"completed": "completed", "detached": "completed", "DONE": "completed",
		"failed": "failed", "timed_out": "failed", "cancelled": "failed", "interrupted": "failed",
	} {
		if got := SubagentStatus(s); got != want {
			t.Errorf("SubagentStatus(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestNonNegInt(t *testing.T) {
	for in, want := range map[string]bool{
		"0": true, "1200": true, "1e3": true, "1.0": true, "-1": false, "1.5": false, `"5"`: false, "": false,
		"null": false, "18446744073709551615": true, "1e300": false,
	} {
		if _, ok := nonNegInt(json.RawMessage(in)); ok != want {
			t.Errorf("nonNegInt(%s) = %v, want %v", in, ok, want)
		}
	}
}

// Long text is split into chunks at rune boundaries, never cut.
func TestChunkSplitting(t *testing.T) {
	c := NewContext(Config{SessionID: "s", MaxChunkBytes: 10})
	c.BeginTurn("t")
	text := "héllo wörld, ünïcode everywhere ✓✓✓"
	res := c.Apply(Event{Type: TypeTextDelta, Text: text})
	var got strings.Builder
	for _, p := range res.Updates {
		validUpdate(t, p)
		var n struct {
			Update struct {
				Content   textBlock `json:"content"`
				MessageID string    `json:"messageId"`
			} `json:"update"`
		}
		if err := json.Unmarshal(p, &n); err != nil {
			t.Fatal(err)
		}
		if len(n.Update.Content.Text) > 10 || !utf8.ValidString(n.Update.Content.Text) {
			t.Errorf("chunk %q", n.Update.Content.Text)
		}
		if n.Update.MessageID != "t-answer" {
			t.Errorf("messageId %q", n.Update.MessageID)
		}
		got.WriteString(n.Update.Content.Text)
	}
	if got.String() != text || len(res.Updates) < 4 {
		t.Errorf("rejoined %q from %d chunks", got.String(), len(res.Updates))
	}
}

func TestDecodeEvent(t *testing.T) {
	for _, bad := range []string{"", "   ", "hello", "[1]", `{"type":""}`, `{"text":"x"}`, `{"type":5}`,
		`{"type":"text_delta","text":5}`, `{"type":"x"} trailing`, `{"type":"x"`, strings.Repeat("[", 20000)} {
		if _, err := DecodeEvent([]byte(bad)); err == nil {
			t.Errorf("DecodeEvent(%.40q) = nil error", bad)
		}
	}
	ev, err := DecodeEvent([]byte("  {\"type\":\"future_thing\",\"whatever\":[1,2,{}]}\r\n"))
	if err != nil || ev.Type != "future_thing" {
		t.Errorf("unknown type: %+v %v", ev, err)
	}
}

// hostile builds a tool_result line whose output is about n bytes of adversarial text: escapes, token
// prefixes, an unterminated PEM key, key=value runs and long words.
func hostile(n int) []byte {
	unit := `sk-` + strings.Repeat("a", 40) + ` password=` + strings.Repeat("b", 30) + ` Bearer ` + strings.Repeat("c", 50) +
		" \u00e9\u2713\n\t\"quoted\" \\ back " + strings.Repeat("word ", 10) + " -----BEGIN RSA PRIVATE KEY-----"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(unit)
	}
	out, _ := json.Marshal(b.String())
	return []byte(`{"type":"tool_result","id":"t1","ok":false,"error":{"kind":"io","message":"boom"},"exitCode":1,"output":` + string(out) + `}`)
}

func hostileContext() *Context {
	c := NewContext(Config{SessionID: "s", Cwd: "/w"})
	c.BeginTurn("t")
	c.ApplyLine([]byte(`{"type":"tool_call","id":"t1","name":"bash","args":{"command":"cat big"}}`))
	return c
}

// A 500 KB hostile tool output is bounded (with a marker), redacted and schema-valid, quickly.
func TestHostileToolOutput(t *testing.T) {
	line := hostile(500 << 10)
	c := hostileContext()
	// Its speed is BenchmarkHostileToolOutput's to show: a wall-clock bound here failed on a loaded machine.
	res := c.ApplyLine(line)
	if len(res.Updates) != 1 {
		t.Fatalf("updates: %d", len(res.Updates))
	}
	p := res.Updates[0]
	validUpdate(t, p)
	if len(p) > 3*defaultFieldBytes+4096 {
		t.Errorf("update is %d bytes, want bounded", len(p))
	}
	for _, want := range []string{`"status":"failed"`, `io: boom`, `[gateway: truncated`, `[REDACTED]`} {
		if !bytes.Contains(p, []byte(want)) {
			t.Errorf("update lacks %s", want)
		}
	}
	if bytes.Contains(p, []byte(strings.Repeat("a", 40))) {
		t.Error("sk- token not redacted")
	}
}

// BenchmarkHostileToolOutput shows linear time: compare ns/op of the 50KB and 500KB runs (ratio ≈ 10).
func BenchmarkHostileToolOutput(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int
	}{{"50KB", 50 << 10}, {"500KB", 500 << 10}} {
		b.Run(bc.name, func(b *testing.B) {
			line := hostile(bc.n)
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				c := hostileContext()
				if res := c.ApplyLine(line); len(res.Updates) != 1 {
					b.Fatal("no update")
				}
			}
		})
	}
}

func BenchmarkTextDelta(b *testing.B) {
	c := NewContext(Config{SessionID: "s"})
	c.BeginTurn("t")
	line := []byte(`{"type":"text_delta","text":"Let me read the file to understand the structure of the project."}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for i := 0; b.Loop(); i++ {
		if i%10000 == 0 {
			c.BeginTurn("t") // keep the dedupe buffer from growing across iterations
		}
		c.ApplyLine(line)
	}
}
