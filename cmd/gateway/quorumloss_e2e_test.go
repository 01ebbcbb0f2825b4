package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// TestQuorumLossNotReady: with 2 of 3 nats-servers down, the gateways still connected to
// the third answer /readyz 503 store_unavailable within a bounded time (the store takes no writes), and 200
// again once the servers are back; a prompt routed through a non-owner meanwhile answers 503 within a bound
// instead of hanging.
func TestQuorumLossNotReady(t *testing.T) {
	f := natstest.NewForming(t, 3)
	for i := range 3 {
		f.Start(i)
	}
	for _, u := range f.URLs {
		natstest.Poll(t, "nats-server "+u+" with JetStream ready", 50*time.Millisecond, func() bool { return natstest.JetStreamReady(u) })
	}
	// Both gateways on the server that stays: their connections stay up through the outage.
	a, _, _ := startChildGateway(t, "--nats-url", f.URLs[0], "--node-id", "a", "--nats-replicas", "3")
	b, _, _ := startChildGateway(t, "--nats-url", f.URLs[0], "--node-id", "b", "--nats-replicas", "3")
	waitNodeCount(t, a, 2)
	waitNodeCount(t, b, 2)
	s := a.createSession(map[string]any{})
	var st sessionJSON
	if code := b.do("GET", "/v1/sessions/"+s.ID, nil, &st); code != http.StatusOK {
		t.Fatalf("the session on b: %d", code)
	}

	f.Stop(1)
	f.Stop(2)
	readyz := func(g *gateway) (int, string) {
		var p struct {
			Code string `json:"code"`
		}
		code := g.do("GET", "/readyz", nil, &p)
		return code, p.Code
	}
	for _, g := range []*gateway{a, b} {
		waitUntil(t, "/readyz 503 store_unavailable after the quorum was lost", 30*time.Second, func() bool {
			code, pc := readyz(g)
			return code == http.StatusServiceUnavailable && pc == "store_unavailable"
		})
	}

	// A prompt and a cancel through the non-owner answer within a bound: the prompt 503 with a documented
	// code (the owner may have started the turn: its frames cannot reach b), the cancel at all.
	promptPath := "/v1/sessions/" + s.ID + "/prompt"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	sent := time.Now()
	code, body, err := b.httpDo(ctx, "POST", promptPath, `{"prompt":[{"type":"text","text":"quick"}]}`, nil)
	cancel()
	t.Logf("prompt through the non-owner during the outage: %d %s after %s", code, body, time.Since(sent))
	if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(string(body), `"code":"store_unavailable"`) && !strings.Contains(string(body), `"code":"owner_unavailable"`) {
		t.Fatalf("prompt through the non-owner during the outage: %d %s %v; want 503 store_unavailable or owner_unavailable within 30s", code, body, err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	code, body, err = b.httpDo(ctx, "POST", "/v1/sessions/"+s.ID+"/cancel", "", nil)
	cancel()
	if err != nil {
		t.Fatalf("cancel through the non-owner during the outage: no answer within 30s: %v", err)
	}
	t.Logf("cancel through the non-owner during the outage: %d %s", code, body)

	f.Start(1)
	f.Start(2)
	for _, g := range []*gateway{a, b} {
		waitUntil(t, "/readyz 200 after the quorum came back", 2*time.Minute, func() bool {
			code, _ := readyz(g)
			return code == http.StatusOK
		})
	}
}

// waitUntil polls cond every 50 ms until it holds, failing the test after limit.
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
