package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestDeliveryClientCloseFreesSlot: a client that goes away while caught up (the normal way a browser tab
// closes) must release its handler, its reader and its client slot. With --max-clients 2, five
// connect/close cycles in a row must all be admitted, and the gateway must then shut down within its
// shutdown timeout (wsh.Shutdown waits for every connection).
func TestDeliveryClientCloseFreesSlot(t *testing.T) {
	g := startGateway(t, "--max-clients", "2", "--shutdown-timeout", "5s")
	s := g.createSession(nil)
	for i := range 5 {
		// A slot is released asynchronously when the server notices the close: retry a 503 for a while.
		var c *websocket.Conn
		deadline := time.Now().Add(10 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			var resp *http.Response
			var err error
			c, resp, err = websocket.Dial(ctx, g.wsURL("/v1/sessions/"+s.ID+"/ws"), nil)
			cancel()
			if err == nil {
				break
			}
			if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("connection %d: %v (status %v): the slots of closed clients were never released", i, err, statusOf(resp))
			}
			time.Sleep(20 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			if f, _ := parseWire(data); f.Method == "_gateway/replay_complete" {
				break
			}
		}
		cancel()
		// Alternate a clean close handshake and an abrupt TCP close.
		if i%2 == 0 {
			c.Close(websocket.StatusNormalClosure, "bye")
		} else {
			c.CloseNow()
		}
	}
	start := time.Now()
	if err := g.stop(); err != nil {
		t.Fatalf("run returned %v after %s: connection handlers outlived their sockets", err, time.Since(start).Round(time.Millisecond))
	}
}

func statusOf(r *http.Response) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprint(r.StatusCode)
}

// TestDeliveryShutdownSays1001: on shutdown every socket is closed with 1001 (reconnect with after), never
// 4009 (session closed: do not retry): run.go closes the sessions (reg.Shutdown, whose session close makes
// sockets send 4009) concurrently with the WebSocket face (wsh.Shutdown, 1001), so whichever runs first
// decides what a client is told. Several gateways with several sockets each, to give the race room.
func TestDeliveryShutdownSays1001(t *testing.T) {
	t.Parallel()
	bad, total := 0, 0
	for range 12 {
		g := startGateway(t)
		var ws []*wsClient
		for range 3 {
			s := g.createSession(nil)
			for range 4 {
				w := g.dial("/v1/sessions/" + s.ID + "/ws")
				w.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
				ws = append(ws, w)
			}
		}
		if err := g.stop(); err != nil {
			t.Fatalf("run returned %v", err)
		}
		for _, w := range ws {
			total++
			if st := w.waitClosed(); st != websocket.StatusGoingAway {
				bad++
				t.Logf("socket closed with %d", st)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d sockets were closed with something else than 1001 on shutdown", bad, total)
	}
}
