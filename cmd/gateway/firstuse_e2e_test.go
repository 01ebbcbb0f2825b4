package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// TestClusterFirstUseUnderLoad: sessions created on a are used for the first time through b, all at once, by
// a prompt, a GET or a WebSocket attach. Each first use loads b's copy of the session from the store. Every
// one answers as on the owner (no 503, no timeout), and none of b's reads of a stored log waited for a timer
// to notice that the store sent nothing (gateway_store_feed_stalls_total stays 0); b logs nothing at warn.
func TestClusterFirstUseUnderLoad(t *testing.T) {
	gws, _ := clusterGateways(t, "--max-sessions", "0", "--max-sessions-per-user", "0")
	a, b := gws[0], gws[1]
	const n = 200
	ids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var s sessionJSON
			code, body, err := a.httpDo(context.Background(), "POST", "/v1/sessions", map[string]any{"permissionPolicy": "approve-all"}, &s)
			if err != nil || code != http.StatusCreated {
				t.Errorf("create on a: %d %s %v", code, body, err)
			}
			ids[i] = s.ID
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	logsBefore := len(b.logs.String())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make([]error, n)
	start := make(chan struct{})
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = firstUse(ctx, b, id, i%10)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("first use %d of %s through b: %v", i, ids[i], err)
		}
	}
	var metrics string
	if code, body, err := b.httpDo(ctx, "GET", "/metrics", nil, nil); err != nil || code != http.StatusOK {
		t.Fatalf("b's /metrics: %d %v", code, err)
	} else {
		metrics = string(body)
	}
	if !strings.Contains(metrics, "\ngateway_store_feed_stalls_total 0\n") {
		for _, l := range strings.Split(metrics, "\n") {
			if strings.HasPrefix(l, "gateway_store_feed_stalls_total") {
				t.Errorf("b's reads of stored logs waited for a timer: %s", l)
			}
		}
		if !strings.Contains(metrics, "gateway_store_feed_stalls_total") {
			t.Errorf("b's /metrics has no gateway_store_feed_stalls_total")
		}
	}
	for _, l := range strings.Split(b.logs.String()[logsBefore:], "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			t.Errorf("b logged during the first uses: %s", l)
		}
	}
}

// firstUse is one kind of first use of session id through g: 1 a GET, 2 a WebSocket attach that reads the
// replay to its end, any other a prompt (the most of them: the owner's turns load the store meanwhile).
func firstUse(ctx context.Context, g *gateway, id string, kind int) error {
	switch kind {
	default:
		code, body, err := g.httpDo(ctx, "POST", "/v1/sessions/"+id+"/prompt", `{"prompt":[{"type":"text","text":"quick"}]}`, nil)
		if err != nil || code != http.StatusAccepted {
			return fmt.Errorf("prompt: %d %s %v", code, body, err)
		}
	case 1:
		var v sessionJSON
		code, body, err := g.httpDo(ctx, "GET", "/v1/sessions/"+id, nil, &v)
		if err != nil || code != http.StatusOK || v.Status != "idle" {
			return fmt.Errorf("GET: %d %s %v", code, body, err)
		}
	case 2:
		c, _, err := websocket.Dial(ctx, g.wsURL("/v1/sessions/"+id+"/ws"), nil)
		if err != nil {
			return fmt.Errorf("attach: %v", err)
		}
		defer c.CloseNow()
		c.SetReadLimit(64 << 20)
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return fmt.Errorf("attach: before replay_complete: %v", err)
			}
			var f struct{ Method string }
			if json.Unmarshal(data, &f) == nil && f.Method == "_gateway/replay_complete" {
				return nil
			}
		}
	}
	return nil
}
