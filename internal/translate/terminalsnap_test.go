package translate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

type snapTerminal struct {
	TerminalID string `json:"terminalId"`
	Output     string
	Truncated  bool
	ExitStatus *struct {
		ExitCode *int
		Signal   *string
	}
}

func snapshotTerminals(t *testing.T, c *Context) []snapTerminal {
	t.Helper()
	var doc struct{ Terminals []snapTerminal }
	if err := json.Unmarshal(c.Snapshot(1), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Terminals
}

func gwTermOutput(id, data string) []byte {
	b, _ := json.Marshal(map[string]any{"terminalId": id, "data": data})
	return b
}

// TestSnapshotTerminals: the snapshot carries each gateway-served terminal's output (its last 64 KiB, cut at a
// character boundary) and its exit status, so a client that resyncs fills the pane.
func TestSnapshotTerminals(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.Note("_gateway/terminal_output", gwTermOutput("term_a", "hello "))
	c.Note("_gateway/terminal_output", gwTermOutput("term_b", "other\n"))
	c.Note("_gateway/terminal_output", gwTermOutput("term_a", "world\n"))
	c.Note("_gateway/terminal_exit", []byte(`{"terminalId":"term_a","exitCode":3,"signal":null}`))
	for range 20 { // 20 × 8 KiB of 3-byte characters: more than the bound
		c.Note("_gateway/terminal_output", gwTermOutput("term_b", strings.Repeat("€", 8<<10/3)))
	}
	c.Note("_gateway/terminal_output", []byte(`{"terminalId":"term_b","data":"","truncated":true}`))
	c.Note("_gateway/terminal_exit", []byte(`{"terminalId":"term_b","exitCode":null,"signal":"SIGKILL"}`))
	c.Note("_gateway/terminal_output", []byte(`garbage`))
	ts := snapshotTerminals(t, c)
	if len(ts) != 2 || ts[0].TerminalID != "term_a" || ts[1].TerminalID != "term_b" {
		t.Fatalf("terminals %+v", ts)
	}
	a, b := ts[0], ts[1]
	if a.Output != "hello world\n" || a.Truncated || a.ExitStatus == nil || *a.ExitStatus.ExitCode != 3 || a.ExitStatus.Signal != nil {
		t.Fatalf("term_a %+v", a)
	}
	if !b.Truncated || len(b.Output) > 64<<10 || len(b.Output) < 64<<10-3 || !utf8.ValidString(b.Output) ||
		strings.Trim(b.Output, "€") != "" || b.ExitStatus == nil || *b.ExitStatus.Signal != "SIGKILL" {
		t.Fatalf("term_b: %d bytes, truncated %v, exit %+v", len(b.Output), b.Truncated, b.ExitStatus)
	}
}

// TestSnapshotTerminalsBounded: at most 32 terminals are kept, the oldest go first.
func TestSnapshotTerminalsBounded(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	for i := range 40 {
		c.Note("_gateway/terminal_output", gwTermOutput("term_"+string(rune('A'+i)), "x"))
	}
	ts := snapshotTerminals(t, c)
	if len(ts) != 32 || ts[0].TerminalID != "term_"+string(rune('A'+8)) {
		t.Fatalf("%d terminals, first %q", len(ts), ts[0].TerminalID)
	}
}

// TestGoldenGatewayTerminals: a session restored from its log shows the same terminals as the live one.
func TestGoldenGatewayTerminals(t *testing.T) {
	steps := []step{
		{Begin: "t1"},
		{Note: [2]string{"_gateway/terminal_output", `{"terminalId":"term_1","data":"build \u001b[32mok\u001b[0m\n"}`}},
		{Note: [2]string{"_gateway/terminal_output", `{"terminalId":"term_1","data":"é done\n"}`}},
		{Note: [2]string{"_gateway/terminal_exit", `{"terminalId":"term_1","exitCode":0,"signal":null}`}},
		{Note: [2]string{"_gateway/terminal_output", `{"terminalId":"term_2","data":"y\n"}`}},
		{Note: [2]string{"_gateway/terminal_output", `{"terminalId":"term_2","data":"","truncated":true}`}},
		{Update: chunk("agent_message_chunk", "Ran it.")},
		end(""),
	}
	runScenario(t, "gateway_terminals", Config{SessionID: "gw-5"}, steps)
}
