package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The gateway serves ACP terminals to its agents (internal/agentsvc/terminals.go). These tests drive them with
// internal/testagent in its term mode (the prompt is a list of terminal steps, the answer their results) and
// run the test agent binary itself as the command (its -print mode), so no test depends on the host's tools.

type termResult struct {
	Op         string
	TerminalID string
	Result     struct {
		TerminalID string `json:"terminalId"`
		Output     string
		Truncated  bool
		ExitStatus *struct {
			ExitCode *int
			Signal   *string
		}
		ExitCode *int
		Signal   *string
	}
	Error *struct {
		Code    int
		Message string
		Data    json.RawMessage
	}
}

// runTerminalSteps prompts the term-mode agent with steps and returns its results, one per step.
func runTerminalSteps(t *testing.T, g *gateway, sid string, steps ...map[string]any) []termResult {
	t.Helper()
	text, _ := json.Marshal(steps)
	var res struct{ StopReason, Text string }
	if code := g.do("POST", "/v1/sessions/"+sid+"/prompt?wait=true", map[string]string{"text": string(text)}, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %d %+v\n%s", code, res, g.logs.String())
	}
	var out []termResult
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil || len(out) != len(steps) {
		t.Fatalf("results %q: %v", res.Text, err)
	}
	return out
}

// printCmd is a create step running the test agent as a command with the given flags.
func printCmd(t *testing.T, flags ...string) map[string]any {
	return map[string]any{"op": "create", "command": testAgentBinary(t), "args": flags}
}

func TestTerminalRunsCommandAndReportsExit(t *testing.T) {
	g, _ := testAgentGateway(t, "term")
	s := g.createSession(nil)
	r := runTerminalSteps(t, g, s.ID,
		printCmd(t, "-print", "hello\n", "-stderr", "oops\n"), map[string]any{"op": "wait"}, map[string]any{"op": "output"},
		printCmd(t, "-print", "x", "-exit", "7"), map[string]any{"op": "wait"}, map[string]any{"op": "output"})
	for _, x := range r {
		if x.Error != nil {
			t.Fatalf("%s: %+v", x.Op, x.Error)
		}
	}
	if !strings.HasPrefix(r[0].TerminalID, "term_") || r[3].TerminalID == r[0].TerminalID {
		t.Fatalf("terminal ids %q, %q", r[0].TerminalID, r[3].TerminalID)
	}
	if c := r[1].Result.ExitCode; c == nil || *c != 0 || r[1].Result.Signal != nil {
		t.Fatalf("wait_for_exit: %+v", r[1].Result)
	}
	out := r[2].Result
	if out.Output != "hello\noops\n" || out.Truncated || out.ExitStatus == nil || *out.ExitStatus.ExitCode != 0 {
		t.Fatalf("output: %+v", out)
	}
	if c := r[4].Result.ExitCode; c == nil || *c != 7 {
		t.Fatalf("failing command: wait_for_exit %+v", r[4].Result)
	}
	if e := r[5].Result.ExitStatus; e == nil || *e.ExitCode != 7 || r[5].Result.Output != "x" {
		t.Fatalf("failing command: output %+v", r[5].Result)
	}
	// Clients saw the output and the exit as frames, and the tool call that refers to the terminal.
	frames := g.fullLogWS(t, s.ID, s.Epoch)
	var text strings.Builder
	var exits []string
	sawRef := false
	for _, f := range frames {
		var m struct {
			Method string
			Params struct {
				TerminalID string `json:"terminalId"`
				Data       string
				ExitCode   *int
				Signal     *string
				Update     struct {
					Content []struct{ Type, TerminalID string }
				}
			}
		}
		_ = json.Unmarshal(f.Raw, &m)
		switch m.Method {
		case "_gateway/terminal_output":
			if m.Params.TerminalID == r[0].TerminalID {
				text.WriteString(m.Params.Data)
			}
		case "_gateway/terminal_exit":
			if m.Params.ExitCode == nil || m.Params.Signal != nil {
				t.Fatalf("exit frame %s", f.Raw)
			}
			exits = append(exits, m.Params.TerminalID+"="+strconv.Itoa(*m.Params.ExitCode))
		case "session/update":
			for _, c := range m.Params.Update.Content {
				sawRef = sawRef || c.Type == "terminal" && c.TerminalID == r[0].TerminalID
			}
		}
	}
	if text.String() != "hello\noops\n" {
		t.Fatalf("terminal_output frames carried %q", text.String())
	}
	if want := []string{r[0].TerminalID + "=0", r[3].TerminalID + "=7"}; strings.Join(exits, ",") != strings.Join(want, ",") {
		t.Fatalf("terminal_exit frames %v, want %v", exits, want)
	}
	if !sawRef {
		t.Fatal("no tool call content {type: terminal} for the terminal")
	}
}

// TestTerminalEnvironment: a command gets the agents' environment allowlist (empty here: the test gateway's
// environment is empty) plus the request's env, not the gateway process's own environment, and runs in the
// requested directory inside the session cwd.
func TestTerminalEnvironment(t *testing.T) {
	if os.Getenv("HOME") == "" {
		t.Setenv("HOME", "/nonexistent-home-for-the-test")
	}
	g, _ := testAgentGateway(t, "term")
	s := g.createSession(nil)
	sub := filepath.Join(s.Cwd, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	create := printCmd(t, "-getenv", "TERMINAL_VAR,HOME,cwd")
	create["env"] = []map[string]string{{"name": "TERMINAL_VAR", "value": "from the request"}}
	create["cwd"] = sub
	r := runTerminalSteps(t, g, s.ID, create, map[string]any{"op": "wait"}, map[string]any{"op": "output"})
	if want := "TERMINAL_VAR=from the request\nHOME=\ncwd=" + sub + "\n"; r[2].Result.Output != want {
		t.Fatalf("environment %q, want %q", r[2].Result.Output, want)
	}
}

// TestTerminalOutputTruncatedAtCharBoundary: output past outputByteLimit is cut from the start, at a
// character boundary (the retained output may be a little shorter than the limit), and says truncated.
func TestTerminalOutputTruncatedAtCharBoundary(t *testing.T) {
	g, _ := testAgentGateway(t, "term")
	s := g.createSession(nil)
	create := printCmd(t, "-print", "é", "-repeat", "50000") // 100 000 bytes of 2-byte characters
	create["outputByteLimit"] = 1001
	r := runTerminalSteps(t, g, s.ID, create, map[string]any{"op": "wait"}, map[string]any{"op": "output"})
	out := r[2].Result
	if !out.Truncated || !utf8.ValidString(out.Output) || len(out.Output) != 1000 || strings.Trim(out.Output, "é") != "" {
		t.Fatalf("truncated %v, %d bytes, valid %v", out.Truncated, len(out.Output), utf8.ValidString(out.Output))
	}
	// The frames carry all of it, each chunk bounded and valid on its own.
	total := 0
	for _, f := range g.fullLogWS(t, s.ID, s.Epoch) {
		var m struct {
			Method string
			Params struct{ Data string }
		}
		_ = json.Unmarshal(f.Raw, &m)
		if m.Method == "_gateway/terminal_output" {
			if len(m.Params.Data) > 8<<10 || !utf8.ValidString(m.Params.Data) || strings.Trim(m.Params.Data, "é") != "" {
				t.Fatalf("chunk of %d bytes, valid %v", len(m.Params.Data), utf8.ValidString(m.Params.Data))
			}
			total += len(m.Params.Data)
		}
	}
	if total != 100000 {
		t.Fatalf("frames carried %d bytes, want 100000", total)
	}
}

// TestTerminalKillEscalates: terminal/kill sends SIGTERM to the command's group and, when the command ignores
// it, SIGKILL after the grace.
func TestTerminalKillEscalates(t *testing.T) {
	g, _ := testAgentGateway(t, "term")
	s := g.createSession(nil)
	r := runTerminalSteps(t, g, s.ID,
		printCmd(t, "-ignore-term", "-sleep", "1000"), map[string]any{"op": "until", "text": "ready"},
		map[string]any{"op": "kill"}, map[string]any{"op": "wait"}, map[string]any{"op": "output"},
		printCmd(t, "-print", "-", "-sleep", "1000"), map[string]any{"op": "until", "text": "-"},
		map[string]any{"op": "kill"}, map[string]any{"op": "wait"})
	for _, x := range r {
		if x.Error != nil {
			t.Fatalf("%s: %+v", x.Op, x.Error)
		}
	}
	if sig := r[3].Result.Signal; sig == nil || *sig != "SIGKILL" || r[3].Result.ExitCode != nil {
		t.Fatalf("a command that ignores SIGTERM: wait_for_exit %+v, want signal SIGKILL", r[3].Result)
	}
	if e := r[4].Result.ExitStatus; e == nil || e.Signal == nil || *e.Signal != "SIGKILL" {
		t.Fatalf("output after kill: %+v", r[4].Result)
	}
	if sig := r[8].Result.Signal; sig == nil || *sig != "SIGTERM" {
		t.Fatalf("a command that obeys SIGTERM: wait_for_exit %+v", r[8].Result)
	}
}

// TestTerminalReleaseAndCap: release after exit works and frees the slot; the cap refuses a terminal past
// --max-terminals-per-session; a released id is unknown.
func TestTerminalReleaseAndCap(t *testing.T) {
	g, _ := testAgentGateway(t, "term", "--max-terminals-per-session", "2")
	s := g.createSession(nil)
	r := runTerminalSteps(t, g, s.ID,
		printCmd(t, "-print", "a"), map[string]any{"op": "wait"}, map[string]any{"op": "release"}, map[string]any{"op": "output"},
		printCmd(t, "-print", "b"), printCmd(t, "-print", "c"), printCmd(t, "-print", "d"))
	if r[2].Error != nil {
		t.Fatalf("release after exit: %+v", r[2].Error)
	}
	if r[3].Error == nil || r[3].Error.Code != -32602 {
		t.Fatalf("output of a released terminal: %+v", r[3])
	}
	if r[4].Error != nil || r[5].Error != nil {
		t.Fatalf("two terminals within the cap: %+v %+v", r[4].Error, r[5].Error)
	}
	if r[6].Error == nil || !strings.Contains(string(r[6].Error.Data), "limit") {
		t.Fatalf("third terminal past a cap of 2: %+v", r[6])
	}
}

// TestTerminalCwdConfined: a cwd outside the session's (by .. or by a symlink) is refused with -32602; one
// inside is used.
func TestTerminalCwdConfined(t *testing.T) {
	g, _ := testAgentGateway(t, "term")
	s := g.createSession(nil)
	if err := os.Mkdir(filepath.Join(s.Cwd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(s.Cwd, "out")); err != nil {
		t.Fatal(err)
	}
	steps := []map[string]any{}
	for _, cwd := range []string{filepath.Join(s.Cwd, ".."), filepath.Join(s.Cwd, "out"), "relative", filepath.Join(s.Cwd, "sub")} {
		c := printCmd(t, "-print", "x")
		c["cwd"] = cwd
		steps = append(steps, c)
	}
	r := runTerminalSteps(t, g, s.ID, steps...)
	for i := 0; i < 3; i++ {
		if r[i].Error == nil || r[i].Error.Code != -32602 {
			t.Fatalf("cwd %d: %+v, want -32602", i, r[i])
		}
	}
	if r[3].Error != nil {
		t.Fatalf("cwd inside: %+v", r[3].Error)
	}
}

// TestTerminalKilledWithSession: a terminal still running when its session is closed, or when its agent
// exits, is killed: its process is gone.
func TestTerminalKilledWithSession(t *testing.T) {
	g, _ := testAgentGateway(t, "term")
	for _, how := range []string{"close", "agent exit", "shutdown"} {
		s := g.createSession(nil)
		r := runTerminalSteps(t, g, s.ID, printCmd(t, "-print-pid", "-sleep", "1000"), map[string]any{"op": "until", "text": "\n"})
		pid := commandPid(t, r[1].Result.Output)
		switch how {
		case "close":
			if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent {
				t.Fatalf("delete: %d", code)
			}
		case "shutdown":
			if err := g.stop(); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
		default:
			g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", map[string]string{"text": `[{"op":"exit"}]`}, nil) // the turn fails
			g.waitStatus(t, s.ID, "failed")
		}
		waitPidGone(t, pid, "the terminal of a session after "+how)
	}
}

func commandPid(t *testing.T, output string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(output, "pid ")))
	if err != nil || pid <= 0 {
		t.Fatalf("no pid in %q", output)
	}
	return pid
}

// TestTerminalLoggedOutputIsBounded: a command printing several MiB logs at most the per-terminal budget
// (1 MiB) plus one frame, then one `{data: "", truncated: true}` note, and when it ends the last 64 KiB of
// its output (the first of those frames `truncated`: output before it was left out), so the snapshot shows its
// latest output; terminal/output still answers the outputByteLimit-bounded tail of all of it.
func TestTerminalLoggedOutputIsBounded(t *testing.T) {
	g, _ := testAgentGateway(t, "term")
	s := g.createSession(nil)
	const line, end = "0123456789abcdef", "the end\n"
	create := printCmd(t, "-print", line, "-repeat", strconv.Itoa(3<<20/len(line)), "-stderr", end) // 3 MiB, then the end
	create["outputByteLimit"] = 4096
	r := runTerminalSteps(t, g, s.ID, create, map[string]any{"op": "wait"}, map[string]any{"op": "output"})
	out := r[2].Result
	if !out.Truncated || len(out.Output) != 4096 || !strings.HasSuffix(out.Output, end) {
		t.Fatalf("terminal/output: truncated %v, %d bytes", out.Truncated, len(out.Output))
	}
	logged, notes, frames := 0, 0, 0
	var tail strings.Builder
	exitAfterTail := false
	for _, f := range g.fullLogWS(t, s.ID, s.Epoch) {
		var m struct {
			Method string
			Params struct {
				Data      string
				Truncated bool
			}
		}
		_ = json.Unmarshal(f.Raw, &m)
		switch m.Method {
		case "_gateway/terminal_output":
			switch {
			case m.Params.Truncated && notes == 0:
				notes++
				if m.Params.Data != "" {
					t.Fatalf("note with data: %s", f.Raw)
				}
			case notes == 1:
				if m.Params.Truncated != (tail.Len() == 0) {
					t.Fatalf("tail frame %s: only the first says output before it is missing", f.Raw)
				}
				tail.WriteString(m.Params.Data)
			default:
				frames++
				logged += len(m.Params.Data)
			}
		case "_gateway/terminal_exit":
			exitAfterTail = notes == 1 && strings.HasSuffix(tail.String(), end)
		}
	}
	if notes != 1 || !exitAfterTail || logged > 1<<20+8<<10 || logged < 1<<20-8<<10 {
		t.Fatalf("logged %d bytes in %d frames, %d notes, exit after the tail %v", logged, frames, notes, exitAfterTail)
	}
	if tl := tail.String(); len(tl) != 64<<10 || !strings.HasSuffix(tl, line+end) {
		t.Fatalf("tail: %d bytes ending %q", len(tl), tl[max(0, len(tl)-40):])
	}
	// The snapshot (validated against openapi.yaml like every response) holds the latest output and the exit.
	var view struct {
		Snapshot struct {
			Terminals []struct {
				TerminalID string `json:"terminalId"`
				Output     string
				Truncated  bool
				ExitStatus *struct{ ExitCode *int }
			}
		}
	}
	if code := g.do("GET", "/v1/sessions/"+s.ID, nil, &view); code != http.StatusOK {
		t.Fatalf("GET session: %d", code)
	}
	ts := view.Snapshot.Terminals
	if len(ts) != 1 {
		t.Fatalf("snapshot terminals: %+v", ts)
	}
	if ts[0].TerminalID != r[0].TerminalID || !ts[0].Truncated || len(ts[0].Output) != 64<<10 ||
		!strings.HasSuffix(ts[0].Output, line+end) || ts[0].Output != tail.String() || ts[0].ExitStatus == nil || *ts[0].ExitStatus.ExitCode != 0 {
		t.Fatalf("snapshot terminal: %d bytes ending %q, truncated %v, exit %+v", len(ts[0].Output), ts[0].Output[max(0, len(ts[0].Output)-40):], ts[0].Truncated, ts[0].ExitStatus)
	}
}

// TestTerminalTailLoggedWhenEndedEarly: a command past the log budget that is killed, or released, before it
// exits still has the tail of its output logged (bounded: 64 KiB), before its exit, so the pane ends with its
// latest output.
func TestTerminalTailLoggedWhenEndedEarly(t *testing.T) {
	g, _ := testAgentGateway(t, "term")
	const line, end = "0123456789abcdef", "the end\n"
	for _, how := range []string{"kill", "release"} {
		s := g.createSession(nil)
		create := printCmd(t, "-print", line, "-repeat", strconv.Itoa(2<<20/len(line)), "-stderr", end, "-sleep", "1000")
		create["outputByteLimit"] = 4096
		runTerminalSteps(t, g, s.ID, create, map[string]any{"op": "until", "text": end}, map[string]any{"op": how})
		var tail strings.Builder
		notes, exitAfterTail := 0, false
		for _, f := range g.fullLogWS(t, s.ID, s.Epoch) {
			var m struct {
				Method string
				Params struct {
					Data      string
					Truncated bool
				}
			}
			_ = json.Unmarshal(f.Raw, &m)
			switch {
			case m.Method == "_gateway/terminal_output" && notes == 0 && m.Params.Truncated:
				notes++
			case m.Method == "_gateway/terminal_output" && notes == 1:
				tail.WriteString(m.Params.Data)
			case m.Method == "_gateway/terminal_exit":
				exitAfterTail = strings.HasSuffix(tail.String(), end)
			}
		}
		if tl := tail.String(); notes != 1 || !exitAfterTail || len(tl) != 64<<10 || !strings.HasSuffix(tl, line+end) {
			t.Fatalf("%s: %d notes, tail %d bytes ending %q, exit after the tail %v", how, notes, len(tl), tl[max(0, len(tl)-40):], exitAfterTail)
		}
	}
}
