package sessions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// floodSpec is an agent that answers a prompt "N SIZE" with N agent_message_chunks of SIZE bytes each, then
// end_turn. It writes its JSON-RPC lines by hand: encoding hundreds of megabytes through the SDK would make
// the test slow, not the gateway.
func floodSpec() agents.Spec {
	return agents.Spec{Name: "flood", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Prompt []struct {
						Text string `json:"text"`
					} `json:"prompt"`
				} `json:"params"`
			}
			if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
				continue
			}
			var result string
			switch req.Method {
			case "initialize":
				result = `{"protocolVersion":1}`
			case "session/new":
				result = `{"sessionId":"flood"}`
			case "session/prompt":
				var n, size int
				fmt.Sscan(req.Params.Prompt[0].Text, &n, &size)
				line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"flood","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` +
					strings.Repeat("f", size) + `"}}}}` + "\n")
				at := bytes.Index(line, []byte(`"text":"`)) + len(`"text":"`)
				for i := range n {
					// Each chunk starts with its number, so the collected text shows which chunks it holds.
					copy(line[at:], fmt.Sprintf("%08d", i))
					if _, err := out.Write(line); err != nil {
						return nil
					}
				}
				result = `{"stopReason":"end_turn"}`
			default:
				result = `null`
			}
			if _, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result); err != nil {
				return nil
			}
		}
		return nil
	}}
}

// TestTurnTextBounded: a turn of 200 MiB of agent text (400 chunks of 512 KiB, with no client attached) keeps
// at most MaxTurnTextBytes of it for the turn's result, which says it was truncated. The collected text used
// to grow with the turn (2.35 GB RSS for 1 200 such chunks).
func TestTurnTextBounded(t *testing.T) {
	const chunks, size, limit = 400, 512 << 10, 1 << 20
	r, err := NewRegistry(Config{Workdir: t.TempDir(), Log: eventlog.LogLimits{MaxBytes: 4 << 20}, MaxTurnTextBytes: limit}, []agents.Spec{floodSpec()}, "flood")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(textPrompt(strconv.Itoa(chunks) + " " + strconv.Itoa(size)))
	if err != nil {
		t.Fatal(err)
	}
	res := turn.Result()
	if res.Err != nil || res.StopReason != "end_turn" {
		t.Fatalf("turn: %+v", res)
	}
	core.ControlOf(s).Lock()
	held := turn.TextCap()
	core.ControlOf(s).Unlock()
	if len(res.Text) != limit || !res.Truncated || held > 2*limit {
		t.Fatalf("collected %d bytes (holding %d), truncated %v; want %d bytes, truncated", len(res.Text), held, res.Truncated, limit)
	}
	if !strings.HasPrefix(res.Text, "00000000") || res.Text[size:size+8] != "00000001" {
		t.Fatalf("the collected text is not the turn's first chunks: %.16q … %.16q", res.Text, res.Text[size:])
	}
	if _, head := s.Log().Bounds(); head < chunks {
		t.Fatalf("log head %d: the chunks were not all logged", head)
	}
}
