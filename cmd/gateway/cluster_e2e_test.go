package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// Mode c end to end (docs/cluster.md §5): a real 3-node nats-server cluster on loopback, built from its module,
// and three gateway processes, one per server. A session created on a is streamed on b (WebSocket) and c (SSE),
// prompted through c, its permission answered through b's socket; every face on every node holds the bytes the
// owner logged, and /acp session/load on c replays what it replays on a.

// clusterGateways starts the NATS cluster and one gateway per server, nodes "a", "b", "c".
func clusterGateways(t *testing.T) []*gateway {
	t.Helper()
	nc := natstest.StartCluster(t, 3)
	var gws []*gateway
	for i, id := range []string{"a", "b", "c"} {
		g, _, _ := startChildGateway(t, "--nats-url", nc.URLs[i], "--node-id", id, "--nats-replicas", "3")
		gws = append(gws, g)
	}
	for _, g := range gws {
		waitNodes(t, g, 3)
	}
	return gws
}

// waitNodes waits (bounded) until g lists n live nodes.
func waitNodes(t *testing.T, g *gateway, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res struct {
			Nodes []struct {
				ID string `json:"id"`
			} `json:"nodes"`
		}
		if code := g.do("GET", "/v1/nodes", nil, &res); code == http.StatusOK && len(res.Nodes) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed %d nodes", g.base, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestClusterEveryFaceOnEveryNode(t *testing.T) {
	gws := clusterGateways(t)
	a, b, c := gws[0], gws[1], gws[2]
	s := a.createSession(map[string]any{})

	// b and c know the session and that a runs it.
	for _, g := range []*gateway{b, c} {
		var v struct {
			ID, Node, Status string
		}
		if code := g.do("GET", "/v1/sessions/"+s.ID, nil, &v); code != http.StatusOK || v.Node != "a" {
			t.Fatalf("%s: GET the session: %d %+v", g.base, code, v)
		}
	}
	onB := b.dial("/v1/sessions/" + s.ID + "/ws")
	sseCtx, sseCancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer sseCancel()
	req, _ := http.NewRequestWithContext(sseCtx, "GET", c.base+"/v1/sessions/"+s.ID+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	sse, err := http.DefaultClient.Do(req)
	if err != nil || sse.StatusCode != http.StatusOK {
		t.Fatalf("SSE on c: %v %v", err, sse)
	}
	defer sse.Body.Close()

	// A full turn prompted through c; its permission request reaches b's socket and is answered there.
	var started struct {
		TurnID string `json:"turnId"`
	}
	if code := c.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"prompt":[{"type":"text","text":"refactor the parser"}]}`, &started); code != http.StatusAccepted || started.TurnID == "" {
		t.Fatalf("prompt through c: %d %+v", code, started)
	}
	perm, _ := onB.waitFor("the permission request on b", isPermissionRequest)
	var pid string
	if err := json.Unmarshal(perm.ID, &pid); err != nil {
		t.Fatalf("permission id %s: %v", perm.ID, err)
	}
	onB.send(map[string]any{"jsonrpc": "2.0", "id": pid, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
	end, _ := onB.waitFor("the turn's end on b", turnEnded(started.TurnID))
	head := end.Params.Meta.Gateway.Seq
	ssePart := readSSEUntil(t, sse.Body, "id: "+itoa(int(head))+"\n")
	sseCancel()

	// The owner's log, byte for byte, on b's socket and in c's event stream.
	owner := a.fullLogWS(t, s.ID, s.Epoch)
	if uint64(len(owner)) < head {
		t.Fatalf("the owner logged %d frames, b saw up to %d", len(owner), head)
	}
	seenB := map[uint64]string{}
	for _, f := range onB.snapshot() {
		if seq := f.Params.Meta.Gateway.Seq; seq > 0 {
			seenB[seq] = string(f.Raw)
		}
	}
	for _, e := range owner[:head] {
		if seenB[e.Seq] != string(e.Raw) {
			t.Fatalf("frame %d on b:\n got %s\nwant %s", e.Seq, seenB[e.Seq], e.Raw)
		}
		if !strings.Contains(ssePart, fmt.Sprintf("id: %d\n", e.Seq)) || !strings.Contains(ssePart, "data: "+string(e.Raw)+"\n") {
			t.Fatalf("c's event stream lacks frame %d: %s", e.Seq, e.Raw)
		}
	}
	for _, g := range []*gateway{b, c} {
		if got := g.fullLogWS(t, s.ID, s.Epoch); len(got) < int(head) || string(got[head-1].Raw) != string(owner[head-1].Raw) {
			t.Fatalf("%s: a fresh socket's log differs from the owner's", g.base)
		}
	}

	// /acp session/load on c replays the transcript as a does.
	if onC, onA := acpLoadReplay(t, c, s.ID, s.Cwd), acpLoadReplay(t, a, s.ID, s.Cwd); strings.Join(onC, "\n") != strings.Join(onA, "\n") {
		t.Fatalf("/acp load on c:\n%s\non a:\n%s", strings.Join(onC, "\n"), strings.Join(onA, "\n"))
	}

	// Errors through a non-owner are the owner's: no turn to cancel, an unknown permission.
	for _, g := range []*gateway{b, c} {
		var p struct{ Code string }
		if code := g.do("POST", "/v1/sessions/"+s.ID+"/cancel", nil, &p); code != http.StatusConflict || p.Code != "no_turn" {
			t.Fatalf("%s: cancel without a turn: %d %+v", g.base, code, p)
		}
		if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/nope", `{"outcome":"cancelled"}`, &p); code != http.StatusNotFound || p.Code != "permission_not_found" {
			t.Fatalf("%s: an unknown permission: %d %+v", g.base, code, p)
		}
	}

	// A session created through b on c, then closed through a: every node forgets it.
	var made struct{ ID, Node string }
	if code := b.do("POST", "/v1/sessions", `{"node":"c"}`, &made); code != http.StatusCreated || made.Node != "c" {
		t.Fatalf("create on c through b: %d %+v", code, made)
	}
	var p struct{ Code string }
	if code := b.do("POST", "/v1/sessions", `{"node":"nope"}`, &p); code != http.StatusBadRequest || p.Code != "unknown_node" {
		t.Fatalf("create on an unknown node: %d %+v", code, p)
	}
	if code := a.do("DELETE", "/v1/sessions/"+made.ID, nil, nil); code != http.StatusNoContent {
		t.Fatalf("close through a: %d", code)
	}
	for _, g := range gws {
		deadline := time.Now().Add(10 * time.Second)
		for g.do("GET", "/v1/sessions/"+made.ID, nil, nil) != http.StatusNotFound {
			if time.Now().After(deadline) {
				t.Fatalf("%s still serves the closed session", g.base)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
