package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's curl session and the Python example are part of the product: these tests run them as written
// against a live gateway.

const readmeSessionMarker = "<!-- readme-session -->"

// readmeSession returns the ```sh block right after the marker in README.md.
func readmeSession(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), readmeSessionMarker+"\n```sh\n")
	if !ok {
		t.Fatalf("README.md has no %q followed by a ```sh block", readmeSessionMarker)
	}
	block, _, ok := strings.Cut(after, "\n```\n")
	if !ok {
		t.Fatal("the README session block is not closed")
	}
	return block + "\n"
}

// needTools skips the test when a tool the snippet uses is missing (scripts/test.sh installs them in CI).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs it): skipping the documented session", tool)
		}
	}
}

// TestReadmeSession runs the README's curl session with bash against a gateway with the default demo delays
// and checks every step's output: create, quick turn, turn stopped at its permission, answer, cancel, detail,
// close.
func TestReadmeSession(t *testing.T) {
	t.Parallel()
	needTools(t, "bash", "curl", "jq")
	c, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--demo-delay", c.demoDelay.String()) // what `go run ./cmd/gateway` uses
	script := readmeSession(t)
	const userBase = "B=http://127.0.0.1:8080\n"
	if strings.Count(script, userBase) != 1 || !strings.HasPrefix(script, userBase) {
		t.Fatalf("the session must start with %q (the test points it at its own gateway):\n%s", userBase, script)
	}
	script = strings.Replace(script, userBase, "B="+g.base+"\n", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a safety net, not a measurement
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-s")
	cmd.Stdin = strings.NewReader(script)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("the session failed: %v\nstderr: %s\nstdout:\n%s", err, stderr.String(), out)
	}
	uuid := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	steps := []struct{ name, re string }{
		{"quick turn", `\{"turnId":"` + uuid + `","status":"ended","stopReason":"end_turn","turnOutcome":"completed","text":"You said: quick","truncated":false\}`},
		{"turn stopped at its permission", `\{"status":"awaiting_permission","permissions":\[\{"id":"` + uuid + `","title":"Edit notes.md","options":\["allow-once","allow-always","reject-once"\]\}\]\}`},
		{"answer, then the turn's end", `\{"outcome":\{"allowed":true,"optionId":"allow-once","outcome":"selected"\},"status":"ended","stopReason":"end_turn"\}`},
		{"background turn", `\{"turnId":"(` + uuid + `)"\}`},
		{"cancel", `\{"turnId":"(` + uuid + `)"\}`},
		{"joined turn's end", `\{"status":"ended","stopReason":"cancelled"\}`},
		{"detail", `\{"status":"idle","currentTurn":null,"pendingPermissions":\[\],"entries":[1-9][0-9]*\}`},
		{"close", `204`},
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(steps) {
		t.Fatalf("%d output lines, want %d:\n%s", len(lines), len(steps), out)
	}
	var turnIDs []string
	for i, st := range steps {
		m := regexp.MustCompile(`^` + st.re + `$`).FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("step %q printed %q, want %s", st.name, lines[i], st.re)
		}
		if len(m) > 1 {
			turnIDs = append(turnIDs, m[1])
		}
	}
	if turnIDs[0] != turnIDs[1] {
		t.Fatalf("cancelled turn %s, started %s", turnIDs[1], turnIDs[0])
	}
	var list struct{ Sessions []sessionJSON }
	if g.do("GET", "/v1/sessions", nil, &list); len(list.Sessions) != 0 {
		t.Fatalf("sessions left after the README's close: %+v", list.Sessions)
	}
}

// TestPythonFollowExample runs examples/python/follow_events.py on a session: it prints the frames of a turn
// as they come and returns when the session is closed.
func TestPythonFollowExample(t *testing.T) {
	t.Parallel()
	needTools(t, "python3")
	g := startGateway(t)
	s := g.createSession(nil)
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"quick"}`, nil); code != http.StatusOK {
		t.Fatalf("prompt: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a safety net
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", filepath.Join("..", "..", "examples", "python", "follow_events.py"), g.base, s.ID)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() { // the replayed turn, up to its end
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), "_gateway/turn_ended") {
			break
		}
	}
	if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the example failed: %v\n%s\n%s", err, stderr.String(), strings.Join(lines, "\n"))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"1 _gateway/session_ready",
		// The demo sends its commands after session/new's answer, and the test prompts at once: the gateway may
		// log the prompt's turn_started first (the agent still sees the prompt after the commands).
		"session/update available_commands_update",
		"_gateway/turn_started",
		`session/update agent_message_chunk "You said: "`,
		`session/update agent_message_chunk "quick"`,
		"_gateway/turn_ended",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("no %q in the example's output:\n%s", want, got)
		}
	}
	if last := lines[len(lines)-1]; last != "session closed" {
		t.Fatalf("last line %q, want \"session closed\"\n%s", last, got)
	}
}
