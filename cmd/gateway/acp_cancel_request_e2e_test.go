package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestACPCancelRequestForwarded: an /acp client's `$/cancel_request` cancels its request: a session/set_mode
// waiting on the agent (a real process that answers it only when cancelled) is answered -32800 and the agent
// is sent `$/cancel_request` for it (it says so in the next turn); a session/prompt's turn is cancelled as by
// session/cancel and the prompt answered stopReason cancelled.
func TestACPCancelRequestForwarded(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "testagent-echo")
	if err := os.Symlink(testAgentBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	wd := t.TempDir()
	g := startGateway(t, "--workdir", wd, "--agent", "ta="+bin+" -mode echo -hang-set-mode", "--default-agent", "ta")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dialACP(t, g, ctx, acpInitialize)
	res := acpCall(t, ctx, c, "2", []byte(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":`+jsonString(wd)+`,"mcpServers":[]}}`))
	var created struct {
		Result struct{ SessionID string } `json:"result"`
	}
	if json.Unmarshal(res, &created) != nil || created.Result.SessionID == "" {
		t.Fatalf("session/new: %s", res)
	}
	sid := jsonString(created.Result.SessionID)
	write := func(frame string) {
		t.Helper()
		if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}

	write(`{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":` + sid + `,"modeId":"slow"}}`)
	res = acpCall(t, ctx, c, "3", []byte(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}`))
	if !strings.Contains(string(res), `"code":-32800`) {
		t.Fatalf("a cancelled set_mode: %s", res)
	}

	// The agent's next turn waits until its set_mode was cancelled.
	write(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":` + sid + `,"prompt":[{"type":"text","text":"hi"}]}}`)
	text, res := readTurn(t, ctx, c, "4")
	if !strings.Contains(string(res), `"stopReason":"end_turn"`) || !strings.Contains(text, "set_mode cancelled\n") {
		t.Fatalf("the agent did not see its set_mode cancelled: %s, text %q", res, text)
	}

	// A prompt's $/cancel_request cancels its turn once the agent works on it.
	write(`{"jsonrpc":"2.0","id":"p5","method":"session/prompt","params":{"sessionId":` + sid + `,"prompt":[{"type":"text","text":"hang"}]}}`)
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "waiting for a cancelled set_mode") {
			break
		}
	}
	write(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p5"}}`)
	if _, res := readTurn(t, ctx, c, `"p5"`); !strings.Contains(string(res), `"stopReason":"cancelled"`) {
		t.Fatalf("a prompt cancelled with $/cancel_request: %s", res)
	}
}

// readTurn reads an /acp socket until the response with the given id, and returns the agent message text
// the session/update notifications before it carried, and the response.
func readTurn(t *testing.T, ctx context.Context, c *websocket.Conn, id string) (string, []byte) {
	t.Helper()
	var text strings.Builder
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for response %s: %v", id, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Update struct {
					Kind    string `json:"sessionUpdate"`
					Content struct{ Text string }
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.Method == "" && string(m.ID) == id {
			return text.String(), data
		}
		if m.Params.Update.Kind == "agent_message_chunk" {
			text.WriteString(m.Params.Update.Content.Text)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
