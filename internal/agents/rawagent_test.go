package agents

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
)

// rawAgent is a built-in agent for the tests: it writes the given lines to its stdout (over the same SDK
// connection real agents use) and reads whatever the gateway answers, so the gateway's writes never block.
// Answers to the agent's requests are collected by id.
type rawAgent struct {
	lines []string

	mu      sync.Mutex
	answers map[string]json.RawMessage // Guarded by mu.
}

func (a *rawAgent) spec() Spec {
	return Spec{Name: "raw", Kind: KindBuiltin, Builtin: a.run}
}

func (a *rawAgent) run(ctx context.Context, in io.Reader, out io.Writer) error {
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil {
				a.mu.Lock()
				if a.answers == nil {
					a.answers = map[string]json.RawMessage{}
				}
				a.answers[string(m.ID)] = m.Result
				a.mu.Unlock()
			}
		}
	}()
	for _, l := range a.lines {
		if _, err := io.WriteString(out, l+"\n"); err != nil {
			break
		}
	}
	<-read // until the gateway closes stdin (Stop)
	return nil
}

// recorder is a Handler that records what it was handed, in order. Each SessionUpdate first waits for gate
// (when set) so a test can hold the SDK's reader, which handles notifications.
type recorder struct {
	gate <-chan struct{}

	mu     sync.Mutex
	events []string // Guarded by mu.
	called chan string
}

func newRecorder(gate <-chan struct{}) *recorder {
	return &recorder{gate: gate, called: make(chan string, 16)}
}

func (r *recorder) SessionUpdate(params json.RawMessage) {
	if r.gate != nil {
		<-r.gate
	}
	r.add("update")
}

func (r *recorder) RequestPermission(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolCall"`
	}
	_ = json.Unmarshal(params, &p)
	r.add("permission " + p.ToolCall.ToolCallID)
	return json.RawMessage(`{"outcome":{"outcome":"cancelled"}}`), nil
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	select {
	case r.called <- e:
	default:
	}
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func startRaw(t *testing.T, a *rawAgent, h Handler) *Conn {
	t.Helper()
	c, err := Start(a.spec(), Options{Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
