package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// TestStoreKeepsAttachedMCPServers: the servers a client attaches to a restored (cold, detached) session with
// /acp session/load reach the directory entry at once (not only at a clean shutdown), so the restart after a
// kill -9 re-attaches with them, not with the old set.
func TestStoreKeepsAttachedMCPServers(t *testing.T) {
	env := newStoreEnv(t, "-mcp-caps", "http")
	ra, _ := env.registry()
	// A first turn makes the agent advertise mcpCapabilities.http, which AttachMCP checks against.
	s, err := ra.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shutdownRegistry(t, ra)

	rb, cs := env.registry()
	rbDown := false
	defer func() {
		if !rbDown {
			shutdownRegistry(t, rb)
		}
	}()
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := rb.Get(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	mcp := []agents.MCPServer{{Type: agents.MCPHTTP, Name: "tools", URL: "http://127.0.0.1:9/mcp"}}
	if err := h.AttachMCPAs(principal.Principal{}, mcp); err != nil {
		t.Fatalf("attach MCP servers to the detached session: %v", err)
	}
	// Bounded wait on the condition: the directory writer is asynchronous.
	deadline := time.Now().Add(20 * time.Second)
	for {
		e, _, err := cs.Dir().Get(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.ClientMCP) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the directory entry never got the attached MCP servers")
		}
		time.Sleep(20 * time.Millisecond)
	}
	shutdownRegistry(t, rb)
	rbDown = true

	rc, _ := env.registry()
	defer shutdownRegistry(t, rc)
	if _, err := rc.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err = rc.Get(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := sessions.ClientMCP(h); len(got) != 1 || !got[0].Equal(mcp[0]) {
		t.Fatalf("client MCP servers after the second restart: %+v, want %+v", got, mcp)
	}
}
