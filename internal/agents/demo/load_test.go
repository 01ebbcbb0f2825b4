package demo

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/coder/acp-go-sdk"
)

// TestLoadSessionAfterRestart: a fresh agent (as after a gateway restart or a re-attach) loads a session id it
// never made: it replays nothing, answers the default modes and style, and a prompt in that session runs.
func TestLoadSessionAfterRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		ctx := context.Background()
		if _, err := h.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
			t.Fatal(err)
		}
		const sid = acp.SessionId("demo_0123456789abcdef")
		resp, err := h.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sid, Cwd: testCwd, McpServers: []acp.McpServer{}})
		if err != nil {
			t.Fatalf("session/load: %v", err)
		}
		if m := resp.Modes; m == nil || m.CurrentModeId != "default" || len(m.AvailableModes) != 2 {
			t.Errorf("modes = %+v", m)
		}
		checkStyle(t, resp.ConfigOptions, "plain")
		synctest.Wait()
		if us := h.client.sessionUpdates(sid); len(us) != 0 {
			t.Errorf("session/load replayed %q, want nothing", kinds(us))
		}
		if stop, err := h.prompt(sid, "quick"); err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("prompt after load = %q, %v", stop, err)
		}
		if _, err := h.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sid, Cwd: "relative", McpServers: []acp.McpServer{}}); err == nil {
			t.Error("session/load with a relative cwd succeeded")
		}
	})
}
