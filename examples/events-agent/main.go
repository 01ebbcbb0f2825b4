// Command events-agent is an example agent speaking the gateway's native event dialect (docs/events.md):
// it reads one JSON event per line on stdin (prompt, cancel, permission_decision) and prints one JSON event
// per line on stdout. It uses no model and no network; it only reads files under its working directory and
// never writes any. Run it under the gateway with an agents file such as
//
//	{"agent_servers": {"example": {"kind": "events", "command": "go", "args": ["run", "./examples/events-agent"]}}}
//
// or try it by hand:
//
//	echo '{"type":"prompt","turnId":"t1","text":"hello"}' | go run ./examples/events-agent
//
// What a prompt does depends on its text (trimmed):
//
//	quick     one text_delta and done
//	nodes     a recursive child run, a subagent and errors (rlmx / Pixir shapes)
//	noise     non-JSON output and an unknown event type, then done
//	slow      a text_delta every 50 ms for 10 s; on cancel: done "interrupted"
//	race      like slow, but on cancel it answers done "done" (a terminal status racing the cancel)
//	stubborn  like slow, but it ignores cancel
//	crash     a text_delta, a line on stderr, then exit status 3 mid-turn
//	anything else: the full turn: thoughts, a plan, read_file README.md (really read, ≤ 2 KiB),
//	          a failing command, a permission request to edit notes.md (nothing is written), usage,
//	          a provider warning, the streamed answer, the final assistant_message, done.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// in is an event the gateway writes to stdin.
type in struct {
	Type   string `json:"type"`
	TurnID string `json:"turnId"`
	Text   string `json:"text"`
	ID     string `json:"id"`
	Allow  bool   `json:"allow"`
	Reason string `json:"reason"`
}

type agent struct {
	out     *json.Encoder
	events  chan in // everything but prompts
	backlog []in    // events read while looking for a cancel, kept for decision
	turn    string
}

func main() {
	a := &agent{out: json.NewEncoder(os.Stdout), events: make(chan in, 64)}
	prompts := make(chan in)
	go func() {
		defer close(prompts)
		defer close(a.events)
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var ev in
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				fmt.Fprintf(os.Stderr, "events-agent: ignoring input %.80q\n", sc.Text())
				continue
			}
			if ev.Type == "prompt" {
				prompts <- ev
			} else {
				a.events <- ev
			}
		}
	}()
	for p := range prompts {
		a.turn, a.backlog = p.TurnID, nil
		a.run(strings.TrimSpace(p.Text))
	}
}

func (a *agent) emit(v map[string]any) {
	if err := a.out.Encode(v); err != nil {
		os.Exit(1) // stdout is gone: so is the gateway
	}
}

func (a *agent) done(status string) {
	a.emit(map[string]any{"type": "done", "status": status, "turnId": a.turn})
}

// cancelled reports whether a cancel for this turn arrived (without waiting).
func (a *agent) cancelled() bool {
	for {
		select {
		case ev, ok := <-a.events:
			if !ok {
				a.events = nil // stdin is closed; decision exits when it needs more input
				return false
			}
			if ev.Type == "cancel" {
				return true
			}
			a.backlog = append(a.backlog, ev)
		default:
			return false
		}
	}
}

// decision waits for the permission decision with the given id; ok is false when the turn was cancelled.
func (a *agent) decision(id string) (allow bool, reason string, ok bool) {
	for i, ev := range a.backlog {
		if ev.Type == "permission_decision" && ev.ID == id {
			a.backlog = append(a.backlog[:i], a.backlog[i+1:]...)
			return ev.Allow, ev.Reason, true
		}
	}
	if a.events == nil {
		os.Exit(0)
	}
	for ev := range a.events {
		switch {
		case ev.Type == "cancel":
			return false, "cancelled", false
		case ev.Type == "permission_decision" && ev.ID == id:
			return ev.Allow, ev.Reason, true
		}
	}
	os.Exit(0)
	return
}

func (a *agent) run(text string) {
	switch text {
	case "quick":
		a.emit(map[string]any{"type": "text_delta", "text": "You said: quick"})
		a.done("done")
	case "nodes":
		a.nodes()
	case "noise":
		fmt.Println("this line is not JSON")
		fmt.Println(`{"no":"type"}`)
		a.emit(map[string]any{"type": "from_the_future", "x": 1})
		a.emit(map[string]any{"type": "text_delta", "text": "Still here."})
		a.done("done")
	case "slow", "race", "stubborn":
		a.slow(text)
	case "crash":
		a.emit(map[string]any{"type": "text_delta", "text": "About to crash."})
		fmt.Fprintln(os.Stderr, "events-agent: crashing on purpose")
		os.Exit(3)
	default:
		a.full(text)
	}
}

func (a *agent) slow(mode string) {
	for i := 0; i < 200; i++ {
		if mode != "stubborn" && a.cancelled() {
			if mode == "race" {
				a.done("done")
			} else {
				a.done("interrupted")
			}
			return
		}
		a.emit(map[string]any{"type": "text_delta", "text": fmt.Sprintf("tick %d ", i)})
		time.Sleep(50 * time.Millisecond)
	}
	a.done("done")
}

func (a *agent) nodes() {
	a.emit(map[string]any{"type": "iteration_output", "text": "Splitting the question into a child query."})
	a.emit(map[string]any{"type": "recurse", "correlationId": "c1", "parentRunId": "root", "depth": 1, "prompt": "Count the words in README.md"})
	a.emit(map[string]any{"type": "iteration_output", "correlationId": "c1", "text": "About 120 words.",
		"metrics": map[string]any{"latencyMs": 840, "costUsd": 0.0012, "tokens": 310}})
	a.emit(map[string]any{"type": "subagent", "id": "s1", "name": "researcher", "status": "running", "summary": "Reading the docs"})
	a.emit(map[string]any{"type": "subagent", "id": "s1", "name": "researcher", "status": "timed_out", "summary": "No answer within 30 s"})
	a.emit(map[string]any{"type": "recurse", "correlationId": "c2", "parentRunId": "c1", "depth": 2, "prompt": "Find headings"})
	a.emit(map[string]any{"type": "error", "nodeId": "c2", "kind": "child", "message": "child run failed"})
	a.emit(map[string]any{"type": "error", "kind": "provider", "message": "one retry needed"})
	a.done("done")
}

func (a *agent) full(text string) {
	a.emit(map[string]any{"type": "reasoning_delta", "text": "The user said " + fmt.Sprintf("%q", headline(text, 60)) + ". "})
	a.emit(map[string]any{"type": "reasoning_delta", "text": "Let me look at the project first."})
	plan := func(s1, s2, s3 string) {
		a.emit(map[string]any{"type": "plan", "entries": []map[string]string{
			{"content": "Read README.md", "priority": "high", "status": s1},
			{"content": "Propose an edit to notes.md", "priority": "medium", "status": s2},
			{"content": "Answer", "priority": "low", "status": s3},
		}})
	}
	plan("in_progress", "pending", "pending")

	a.emit(map[string]any{"type": "tool_call", "id": "read", "name": "read_file", "args": map[string]any{"path": "README.md"}})
	if data, err := readSmall("README.md", 2048); err != nil {
		a.emit(map[string]any{"type": "tool_result", "id": "read", "ok": false, "error": map[string]string{"kind": "io", "message": err.Error()}})
	} else {
		a.emit(map[string]any{"type": "tool_result", "id": "read", "ok": true, "output": data})
	}
	a.emit(map[string]any{"type": "tool_call", "id": "check", "name": "bash", "args": map[string]any{"command": "make check"}})
	a.emit(map[string]any{"type": "tool_result", "id": "check", "ok": true, "exitCode": 2, "output": "make: *** No rule to make target 'check'.  Stop.\n(the example agent runs nothing; this failure is scripted)"})
	plan("completed", "in_progress", "pending")
	if a.cancelled() {
		a.done("interrupted")
		return
	}

	a.emit(map[string]any{"type": "permission_request", "id": "p1", "tool": "write_file", "toolCallId": "edit",
		"args": map[string]any{"path": "notes.md", "content": "- " + headline(text, 60) + "\n"}, "reason": "Append the prompt to notes.md"})
	allow, reason, ok := a.decision("p1")
	if !ok {
		a.done("interrupted")
		return
	}
	a.emit(map[string]any{"type": "tool_call", "id": "edit", "name": "write_file", "args": map[string]any{"path": "notes.md"}})
	if allow {
		a.emit(map[string]any{"type": "tool_result", "id": "edit", "ok": true, "output": "(example agent: allowed, but nothing was written)"})
	} else {
		a.emit(map[string]any{"type": "tool_result", "id": "edit", "ok": false, "error": map[string]string{"kind": "permission", "message": reason}})
	}
	plan("completed", "completed", "in_progress")
	a.emit(map[string]any{"type": "usage", "used": 1000 + len(text), "size": 200000, "cost": map[string]any{"amount": 0, "currency": "USD"}})
	a.emit(map[string]any{"type": "warning", "id": "w1", "provider": "example", "message": "this agent has no model; answers are scripted"})

	answer := "You said: " + text + ". "
	if allow {
		answer += "The edit was allowed (nothing was written)."
	} else {
		answer += "The edit was not allowed: " + reason + "."
	}
	for _, part := range splitWords(answer, 3) {
		a.emit(map[string]any{"type": "text_delta", "text": part})
	}
	a.emit(map[string]any{"type": "assistant_message", "text": answer})
	plan("completed", "completed", "completed")
	a.done("done")
}

// readSmall reads at most max bytes of a file inside the working directory.
func readSmall(name string, max int64) (string, error) {
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("%s is outside the working directory", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max))
	return string(b), err
}

func headline(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

// splitWords splits s into at most n parts at spaces, keeping every character.
func splitWords(s string, n int) []string {
	var parts []string
	for len(parts) < n-1 {
		i := strings.IndexByte(s[min(len(s), len(s)/(n-len(parts))):], ' ')
		if i < 0 {
			break
		}
		cut := len(s)/(n-len(parts)) + i + 1
		parts = append(parts, s[:cut])
		s = s[cut:]
	}
	return append(parts, s)
}
