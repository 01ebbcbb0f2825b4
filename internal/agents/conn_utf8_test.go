package agents

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"
)

type nopHandler struct{}

func (nopHandler) SessionUpdate(json.RawMessage) {}
func (nopHandler) RequestPermission(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

// TestCallResultIsValidUTF8: raw invalid bytes in an agent's answer (initialize's agentInfo, session/new's
// modes, …, which clients see through the session view and `/acp` initialize) come back as U+FFFD.
func TestCallResultIsValidUTF8(t *testing.T) {
	agent := func(ctx context.Context, in io.Reader, out io.Writer) error {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			var req struct{ ID int }
			if json.Unmarshal(sc.Bytes(), &req) != nil {
				continue
			}
			line := `{"jsonrpc":"2.0","id":` + strconv.Itoa(req.ID) + `,"result":{"agentInfo":{"name":"bad ` + "\xff\xfe" + `"}}}` + "\n"
			if _, err := io.WriteString(out, line); err != nil {
				return err
			}
		}
		return nil
	}
	c, err := Start(Spec{Name: "raw", Kind: KindBuiltin, Builtin: agent}, Options{Handler: nopHandler{}, StopGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1})
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(res) || !json.Valid(res) {
		t.Fatalf("result %q", res)
	}
	var got struct{ AgentInfo struct{ Name string } }
	if json.Unmarshal(res, &got); got.AgentInfo.Name != "bad \uFFFD" {
		t.Fatalf("agentInfo.name %q", got.AgentInfo.Name)
	}
}
