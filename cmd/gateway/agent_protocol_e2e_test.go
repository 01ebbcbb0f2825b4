package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentSpeakingV2IsRefused: the gateway speaks ACP v1 to agents. An agent that answers initialize with
// protocolVersion 2 (an ACP v2 agent that cannot speak v1) is refused with a message naming both versions:
// REST gets 502 agent_error, and an `/acp` client, offered protocolVersion 1 for its own 2, gets a JSON-RPC
// error (-32603, the reason in its message) for session/new instead of a session on an agent the gateway
// cannot talk to; the probe behind `/acp` initialize and GET /v1/agents fails the same way.
func TestAgentSpeakingV2IsRefused(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "testagent-v2")
	if err := os.Symlink(testAgentBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	wd := t.TempDir()
	g := startGateway(t, "--workdir", wd, "--agent", "ta="+bin+" -mode echo -protocol-version 2", "--default-agent", "ta")
	const want = "agent speaks ACP protocol version 2, the gateway speaks 1"
	var p problemJSON
	code := g.do("POST", "/v1/sessions", map[string]any{}, &p)
	if code != http.StatusBadGateway || p.Code != "agent_error" {
		t.Fatalf("create: %d %+v", code, p)
	}
	if !strings.Contains(p.Detail, want) {
		t.Errorf("detail %q does not say %q", p.Detail, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialACP(t, g, ctx)
	var init struct {
		Result struct {
			ProtocolVersion   int `json:"protocolVersion"`
			AgentCapabilities struct {
				Meta struct {
					Gateway map[string]any `json:"gateway"`
				} `json:"_meta"`
			} `json:"agentCapabilities"`
			AgentInfo struct {
				Name string `json:"name"`
			} `json:"agentInfo"`
		} `json:"result"`
	}
	raw := acpCall(t, ctx, c, "1", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"v2-client","version":"0"},"capabilities":{}}}`))
	if err := json.Unmarshal(raw, &init); err != nil || init.Result.ProtocolVersion != 1 {
		t.Fatalf("initialize with protocolVersion 2: %s: want protocolVersion 1", raw)
	}
	// The probe behind initialize failed the same way: the gateway answers for itself.
	if init.Result.AgentInfo.Name != "acp-gateway" || init.Result.AgentCapabilities.Meta.Gateway["agentCapabilities"] != nil {
		t.Errorf("initialize: %s: want the gateway's own agentInfo and no agentCapabilities of the v2 agent", raw)
	}
	var list struct {
		Agents []map[string]any `json:"agents"`
	}
	if code := g.do("GET", "/v1/agents", nil, &list); code != http.StatusOK {
		t.Fatalf("GET /v1/agents: %d %v", code, list)
	}
	listed := false
	for _, a := range list.Agents {
		if a["name"] != "ta" {
			continue
		}
		listed = true
		if _, ok := a["info"]; ok {
			t.Errorf("GET /v1/agents lists the refused agent with info: %v", a)
		}
	}
	if !listed {
		t.Errorf("GET /v1/agents does not list the agent: %v", list.Agents)
	}
	raw = acpCall(t, ctx, c, "2", []byte(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":`+jsonString(wd)+`,"mcpServers":[]}}`))
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.Error == nil {
		t.Fatalf("session/new on a v2 agent: %s: want an error", raw)
	}
	if resp.Error.Code != -32603 || !strings.Contains(resp.Error.Message, want) {
		t.Errorf("session/new error %s does not say %q", raw, want)
	}
}
