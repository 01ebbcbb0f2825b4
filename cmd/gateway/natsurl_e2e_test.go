package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// startNode runs a gateway in mode c on srv's URL as node id.
func startNode(t *testing.T, url, id string, extra ...string) *gateway {
	t.Helper()
	g, err := tryStartGateway(t, append([]string{"--nats-url", url, "--nats-replicas", "1", "--node-id", id, "--shutdown-timeout", "3s"}, extra...)...)
	if err != nil {
		t.Fatalf("node %s: %v", id, err)
	}
	return g
}

// tryStartGateway is startGateway that returns run's error when the gateway exits before it listens.
func tryStartGateway(t *testing.T, args ...string) (*gateway, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g := &gateway{t: t, cancel: cancel, done: make(chan error, 1), logs: &syncBuffer{}}
	full := append([]string{"--addr", "127.0.0.1:0", "--demo-delay", "0", "--workdir", t.TempDir()}, args...)
	go func() { g.done <- run(ctx, full, func(string) string { return "" }, io.Discard, g.logs) }()
	deadline := time.After(60 * time.Second)
	for g.base == "" {
		if m := listenRE.FindStringSubmatch(g.logs.String()); m != nil {
			g.base = "http://" + m[1]
			break
		}
		select {
		case err := <-g.done:
			cancel()
			return nil, fmt.Errorf("exited: %w", err)
		case <-deadline:
			cancel()
			t.Fatalf("gateway did not log its address:\n%s", g.logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Cleanup(func() { g.stop() })
	return g, nil
}

type nodeList struct {
	Nodes []store.NodeInfo `json:"nodes"`
}

// waitNodes polls g's GET /v1/nodes until it lists want (ids, sorted), and returns the list.
func waitNodes(t *testing.T, g *gateway, want ...string) []store.NodeInfo {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var l nodeList
		if code := g.do("GET", "/v1/nodes", nil, &l); code != http.StatusOK {
			t.Fatalf("GET /v1/nodes: %d", code)
		}
		var ids []string
		for _, n := range l.Nodes {
			ids = append(ids, n.ID)
		}
		if slices.Equal(ids, want) {
			return l.Nodes
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/nodes on %s lists %v, want %v", g.base, ids, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitReady polls /readyz until it answers want.
func waitReady(t *testing.T, g *gateway, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code := g.do("GET", "/readyz", nil, nil)
		if code == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz on %s: %d, want %d", g.base, code, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNATSURLTwoNodes runs two gateways on one listening JetStream server, as two nodes of a cluster: each
// lists both nodes with their ids, URLs and agents; a session is created and listed on its node; a third
// gateway with a node id in use fails to start; with the server gone /readyz fails.
func TestNATSURLTwoNodes(t *testing.T) {
	srv := natstest.Listen(t)
	a := startNode(t, srv.URL(), "node-a")
	b := startNode(t, srv.URL(), "node-b", "--advertise-url", "http://gw-b.example:8080")
	for _, g := range []*gateway{a, b} {
		nodes := waitNodes(t, g, "node-a", "node-b")
		if nodes[0].URL != a.base || nodes[1].URL != "http://gw-b.example:8080" {
			t.Fatalf("urls: %q %q, want %q and the advertised one", nodes[0].URL, nodes[1].URL, a.base)
		}
		for _, n := range nodes {
			if !slices.Contains(n.Agents, "demo") || n.Incarnation == "" || n.StartedAt.IsZero() || n.Store.State != "ok" {
				t.Fatalf("node %+v", n)
			}
		}
		waitReady(t, g, http.StatusOK)
	}

	s := a.createSession(map[string]any{})
	var list struct{ Sessions []sessionJSON }
	if code := a.do("GET", "/v1/sessions", nil, &list); code != http.StatusOK || len(list.Sessions) != 1 || list.Sessions[0].ID != s.ID {
		t.Fatalf("list on the owner: %d %+v", code, list)
	}

	// The id's key is alive: the third process waits one TTL for it to expire, then gives up.
	start := time.Now()
	_, err := tryStartGateway(t, "--nats-url", srv.URL(), "--nats-replicas", "1", "--node-id", "node-a")
	if err == nil || !strings.Contains(err.Error(), "--node-id node-a is in use by another live gateway") {
		t.Fatalf("a second node-a: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the second node-a took %s to give up", d)
	}
	waitNodes(t, b, "node-a", "node-b") // the refused process took nothing from node-a

	srv.Stop()
	waitReady(t, a, http.StatusServiceUnavailable)
	waitReady(t, b, http.StatusServiceUnavailable)
}

// TestNATSURLFlags: mode c's flags are refused with a message that says what to do.
func TestNATSURLFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--data-dir", t.TempDir(), "--nats-url", "nats://127.0.0.1:1"}, "--data-dir and --nats-url are mutually exclusive"},
		{[]string{"--nats-url", "nats://127.0.0.1:1", "--node-id", "a.b"}, `--node-id "a.b": want 1 to 64 letters, digits, _ or -`},
		{[]string{"--nats-url", "nats://127.0.0.1:1", "--nats-replicas", "0"}, "--nats-replicas must be at least 1"},
		{[]string{"--nats-url", "nats://127.0.0.1:1", "--advertise-url", "gw-a:8080"}, "--advertise-url \"gw-a:8080\": want an absolute http or https URL"},
		{[]string{"--nats-url", "nats://127.0.0.1:1", "--nats-tls-cert", "c.pem"}, "--nats-tls-cert and --nats-tls-key go together"},
		{[]string{"--node-id", "a"}, "--node-id needs --nats-url"},
		{[]string{"--nats-url", " , "}, "names no server"},
	} {
		err := run(context.Background(), append([]string{"--addr", "127.0.0.1:0"}, tc.args...), func(string) string { return "" }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestNodeIDFromHostname: the default node id is the hostname with other characters as -.
func TestNodeIDFromHostname(t *testing.T) {
	for in, want := range map[string]string{"gw-a": "gw-a", "gw.a.example.com": "gw-a-example-com", "": "gateway", strings.Repeat("x", 70): strings.Repeat("x", 64)} {
		if got := sanitizeNodeID(in); got != want {
			t.Errorf("sanitizeNodeID(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNATSURLTicketsAcrossNodes: a WebSocket ticket minted on node A opens a stream on node B, once.
func TestNATSURLTicketsAcrossNodes(t *testing.T) {
	srv := natstest.Listen(t)
	a := startNode(t, srv.URL(), "node-a", "--token", testToken)
	b := startNode(t, srv.URL(), "node-b", "--token", testToken)
	tk := a.ticketFor("")
	if st, _, _ := b.request("GET", "/acp?ticket="+tk, nil, upgradeHeaders(nil)); st != http.StatusSwitchingProtocols {
		t.Fatalf("a ticket of A on B's /acp: %d", st)
	}
	if st, _, _ := a.request("GET", "/acp?ticket="+tk, nil, upgradeHeaders(nil)); st != http.StatusUnauthorized {
		t.Fatalf("the same ticket again, on A: %d", st)
	}
}
