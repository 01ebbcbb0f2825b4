package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestPingDropsSilentClient: a client that never reads never answers pings (coder/websocket answers them only
// inside Read), so the gateway closes it after a missed pong; a reading client stays connected.
func TestPingDropsSilentClient(t *testing.T) {
	g := startGateway(t, "--ws-ping-interval", "150ms")
	s := g.createSession(nil)
	alive := g.dial("/v1/sessions/" + s.ID + "/ws")
	alive.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	silent, _, err := websocket.Dial(ctx, strings.Replace(g.base, "http", "ws", 1)+"/v1/sessions/"+s.ID+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.CloseNow()

	clients := func() int {
		var v struct{ Clients int }
		g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
		return v.Clients
	}
	deadline := time.Now().Add(20 * time.Second)
	for clients() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("expected 2 clients, have %d", clients())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for clients() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the silent client was never dropped (clients %d)", clients())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The reading client survived many ping intervals and still gets live frames.
	var res struct{ StopReason string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"quick"}`, &res)
	alive.waitFor("turn_ended", func(f frame) bool { return f.Method == "_gateway/turn_ended" })
	if got := clients(); got != 1 {
		t.Fatalf("clients %d after the turn, want 1", got)
	}
}
