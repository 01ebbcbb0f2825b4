package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// TestStartBeforeClusterForms: a gateway started against a NATS cluster of which only
// one server of three is up (no JetStream meta leader) keeps waiting with a log line per attempt, answers
// /healthz 200 and /readyz 503 store_unavailable meanwhile, and becomes ready and serves a session once the
// other two servers start.
func TestStartBeforeClusterForms(t *testing.T) {
	f := natstest.NewForming(t, 3)
	f.Start(0)
	natstest.Poll(t, "the first nats-server listening", 20*time.Millisecond, func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(f.URLs[0], "nats://"))
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	port := natstest.FreePorts(t, 1)[0]
	g := &gateway{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan error, 1), logs: &syncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	args := []string{"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--demo-delay", "0", "--workdir", t.TempDir(),
		"--nats-url", strings.Join(f.URLs, ","), "--node-id", "a", "--nats-replicas", "3"}
	go func() { g.done <- run(ctx, args, func(string) string { return "" }, io.Discard, g.logs) }()
	t.Cleanup(func() { g.stop() })

	// Alive while it waits: bounded polls, each request with its own timeout (a gateway that does not serve
	// yet leaves the connection unanswered in the listen backlog).
	client := &http.Client{Timeout: 2 * time.Second}
	status := func(path string) int {
		resp, err := client.Get(g.base + path)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	waitFor := func(what string, limit time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !cond() {
			select {
			case err := <-g.done:
				g.done <- err
				t.Fatalf("the gateway exited while waiting for %s: %v\n%s", what, err, g.logs.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, g.logs.String())
			}
		}
	}
	waitFor("/healthz 200 before the cluster formed", 60*time.Second, func() bool { return status("/healthz") == http.StatusOK })
	waitFor("a retry logged", 60*time.Second, func() bool {
		return strings.Contains(g.logs.String(), `msg="waiting for the NATS cluster"`) && strings.Contains(g.logs.String(), "attempt=2")
	})
	var p struct {
		Code string `json:"code"`
	}
	if code := g.do("GET", "/readyz", nil, &p); code != http.StatusServiceUnavailable || p.Code != "store_unavailable" {
		t.Fatalf("/readyz before the cluster formed: %d %q, want 503 store_unavailable", code, p.Code)
	}

	f.Start(1)
	f.Start(2)
	waitFor("/readyz 200 after the cluster formed", 2*time.Minute, func() bool { return status("/readyz") == http.StatusOK })
	s := g.createSession(map[string]any{})
	var res struct {
		StopReason string `json:"stopReason"`
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("prompt after the cluster formed: %d %+v", code, res)
	}
}
