package acpws

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestConnectionCap: past MaxConns open sockets, an upgrade is refused before it happens with a 503
// problem+json (stable code, Retry-After); closing a socket frees its slot.
func TestConnectionCap(t *testing.T) {
	e := newEnv(t, Options{MaxConns: 2})
	first := e.dial("/acp")
	first.initialize()
	second := e.dial("/acp")
	second.initialize()

	refused := func() (*http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		defer cancel()
		c, resp, err := websocket.Dial(ctx, e.base+"/acp", nil)
		if err == nil {
			c.CloseNow()
		}
		return resp, err
	}
	resp, err := refused()
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third socket: %v (response %+v), want a 503 before the upgrade", err, resp)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	var p struct{ Code string }
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || p.Code != "too_many_connections" {
		t.Fatalf("problem code %q (%v)", p.Code, err)
	}

	// The refused client changed nothing: the open sockets still work.
	second.request("session/list", map[string]any{})
	if m := second.next(); m.Error != nil {
		t.Fatalf("session/list on an open socket: %+v", m.Error)
	}

	first.c.Close(websocket.StatusNormalClosure, "")
	for deadline := time.Now().Add(stepTimeout); ; time.Sleep(10 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		c, _, err := websocket.Dial(ctx, e.base+"/acp", nil)
		cancel()
		if err == nil {
			c.CloseNow()
			break
		}
		if !strings.Contains(err.Error(), "503") || time.Now().After(deadline) {
			t.Fatalf("after a socket closed: %v", err)
		}
	}
}
