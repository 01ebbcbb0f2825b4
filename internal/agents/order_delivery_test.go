package agents

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The update barrier counts the notifications the SDK will hand to the session so a permission request can
// wait for the tool_call sent before it. It must count exactly the lines whose JSON-RPC method is
// session/update: one it counts but the SDK never hands over (the string "session/update" as a value inside
// params, a response, a garbage or truncated line) desynchronises it for the rest of the connection, and every
// later permission request then waits the full maxWait and loses its ordering guarantee.
func TestUpdateBarrierCountsOnlyUpdateMethods(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		want  uint64
	}{
		{"one notification", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, 1},
		{"spaces around the colon", `{"jsonrpc":"2.0", "method" : "session/update", "params":{}}`, 1},
		{"the method name as tool input", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"grep","rawInput":{"pattern":"session/update"}}}}`, 1},
		{"the method name as message text", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"session/update"}}}}`, 1},
		{"a response mentioning it", `{"jsonrpc":"2.0","id":3,"result":{"methods":["session/update"]}}`, 0},
		{"a permission request about it", `{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"toolCall":{"title":"session/update"}}}`, 0},
		{"a log line on stdout", `debug: sending "session/update" now`, 0},
	} {
		// Whole lines in one read, and reads smaller than the token (a pipe returns whatever the agent wrote;
		// an agent that writes a message in pieces produces such reads).
		for _, n := range []int{1 << 16, 7} {
			t.Run(fmt.Sprintf("%s/reads_of_%d", tc.name, n), func(t *testing.T) {
				b := newUpdateBarrier()
				ready := make(chan struct{})
				close(ready)
				r := b.tap(&chunkReader{s: tc.input + "\n", n: n}, ready)
				if _, err := io.Copy(io.Discard, r); err != nil {
					t.Fatal(err)
				}
				if b.seen != tc.want {
					t.Fatalf("counted %d session/update notifications, want %d", b.seen, tc.want)
				}
			})
		}
	}
}

// TestUpdateBarrierDesyncDelaysLaterRequests shows the cost of a miscount in fake time: after one notification
// whose params contain the string "session/update", a later permission request (with nothing left to wait
// for) is held for the whole maxWait.
func TestUpdateBarrierDesyncDelaysLaterRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newUpdateBarrier()
		ready := make(chan struct{})
		close(ready)
		line := `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","rawInput":{"pattern":"session/update"}}}}` + "\n"
		if _, err := io.Copy(io.Discard, b.tap(strings.NewReader(line), ready)); err != nil {
			t.Fatal(err)
		}
		b.processed() // the SDK handed over the one notification there was
		start := time.Now()
		b.wait(context.Background())
		if d := time.Since(start); d != 0 {
			t.Fatalf("a request with nothing to wait for was held %s", d)
		}
	})
}

type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.s))
	copy(p, c.s[:k])
	c.s = c.s[k:]
	return k, nil
}
