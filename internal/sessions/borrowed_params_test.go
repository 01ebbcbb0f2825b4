package sessions

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/acp-gateway/gateway/internal/agents"
)

// variedSpec is an agent whose prompt is answered with n rounds of a tool call (title, kind, raw input,
// location), its update with content, a message chunk and a thought chunk, every value distinct per round,
// in lines of different lengths, so each line lands somewhere else in the SDK's read buffer.
func variedSpec(n int) agents.Spec {
	return agents.Spec{Name: "varied", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		update := func(u string) error {
			_, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"varied","update":%s}}`+"\n", u)
			return err
		}
		for sc.Scan() {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
				continue
			}
			result := `null`
			switch req.Method {
			case "initialize":
				result = `{"protocolVersion":1}`
			case "session/new":
				result = `{"sessionId":"varied"}`
			case "session/prompt":
				for i := range n {
					pad := fmt.Sprintf("%0*d", 1+i%37, i)
					for _, u := range []string{
						fmt.Sprintf(`{"sessionUpdate":"tool_call","toolCallId":"call-%d","title":"Read file %s","kind":"read","status":"pending","rawInput":{"path":"/src/%s.go"},"locations":[{"path":"/src/%s.go","line":%d}]}`, i, pad, pad, pad, i),
						fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":"call-%d","status":"completed","content":[{"type":"content","content":{"type":"text","text":"output %s"}}],"_meta":{"round":%d}}`, i, pad, i),
						fmt.Sprintf(`{"sessionUpdate":"agent_message_chunk","messageId":"msg-%d","content":{"type":"text","text":"answer %s"}}`, i, pad),
						fmt.Sprintf(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"thought %s"}}`, pad),
					} {
						if update(u) != nil {
							return nil
						}
					}
				}
				result = `{"stopReason":"end_turn"}`
			}
			if _, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result); err != nil {
				return nil
			}
		}
		return nil
	}}
}

// TestUpdatesOutliveTheReadBuffer: the agent's updates reach the session as params borrowed from the SDK's
// read buffer (acp.Connection.HandleNotificationsInline), valid only until SessionUpdate returns. Whatever
// the session keeps from them (tool calls, messages, the snapshot, the turn's text) must be copies: the
// session's state after hundreds of varied lines must equal the state rebuilt from its logged frames.
func TestUpdatesOutliveTheReadBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}, []agents.Spec{variedSpec(300)}, "varied")
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Create(context.Background(), CreateOptions{PermissionPolicy: PolicyApproveAll})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close("test over")
		turn, err := s.Prompt(dlPrompt("go"))
		if err != nil {
			t.Fatal(err)
		}
		if res := turn.Result(); res.Err != nil || res.StopReason != "end_turn" {
			t.Fatalf("turn: %+v", res)
		}
		checkRestored(t, s, "after 300 varied rounds")
	})
}
