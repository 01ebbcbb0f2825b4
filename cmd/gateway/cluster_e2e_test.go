package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// Mode c end to end (docs/cluster.md §5): a real 3-node nats-server cluster on loopback, built from its module,
// and three gateway processes, one per server. A session created on a is streamed on b (WebSocket) and c (SSE),
// prompted through c, its permission answered through b's socket; every face on every node holds the bytes the
// owner logged, and /acp session/load on c replays what it replays on a.

// clusterNode is one gateway process of the cluster and how to start it again.
type clusterNode struct {
	args   []string // its flags: a restart uses the same ones (node id, NATS server, workdir)
	cmd    *exec.Cmd
	exited <-chan struct{}
}

// clusterGateways starts the NATS cluster and one gateway per server, nodes "a", "b", "c", each with the
// flags extra adds.
func clusterGateways(t *testing.T, extra ...string) ([]*gateway, []*clusterNode) {
	t.Helper()
	nc := natstest.StartCluster(t, 3)
	var gws []*gateway
	var nodes []*clusterNode
	for i, id := range []string{"a", "b", "c"} {
		n := &clusterNode{args: []string{"--nats-url", nc.URLs[i], "--node-id", id, "--nats-replicas", "3", "--workdir", t.TempDir()}}
		n.args = append(n.args, extra...)
		var g *gateway
		g, n.cmd, n.exited = startChildGateway(t, n.args...)
		gws, nodes = append(gws, g), append(nodes, n)
	}
	for _, g := range gws {
		waitNodeCount(t, g, 3)
	}
	return gws, nodes
}

// waitNodeCount waits (bounded) until g lists n live nodes.
func waitNodeCount(t *testing.T, g *gateway, n int) {
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

// TestCluster runs the mode c scenarios on one cluster: they take seconds to start.
func TestCluster(t *testing.T) {
	gws, nodes := clusterGateways(t, "--agent", "fa="+testAgentBinary(t)+" -mode echo -fork")
	t.Run("every face on every node", func(t *testing.T) { clusterFaces(t, gws) })
	t.Run("a fork through another node", func(t *testing.T) { clusterFork(t, gws) })
	t.Run("chaos resume on another node each time", func(t *testing.T) { clusterChaos(t, gws) })
	t.Run("a keyed prompt runs once through any node", func(t *testing.T) { clusterIdempotency(t, gws) })
	t.Run("rename and list files through another node", func(t *testing.T) { clusterRenameFiles(t, gws) })
	t.Run("kill -9 of the owner", func(t *testing.T) { clusterKillOwner(t, gws, nodes) }) // last: it kills a
}

func clusterFaces(t *testing.T, gws []*gateway) {
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

// clusterChaos is TestDeliveryChaosResume across the cluster: one session owned by each node, prompted through
// the next node, and clients that resume every time on another node than the last: nothing lost, nothing
// twice, the owner's bytes.
func clusterChaos(t *testing.T, gws []*gateway) {
	const (
		nClients = 15
		nTurns   = 8
		seed     = 20261201
	)
	type sess struct{ id, epoch string }
	ss := make([]sess, len(gws))
	for i, g := range gws {
		s := g.createSession(map[string]any{"permissionPolicy": "approve-all"})
		ss[i] = sess{s.ID, s.Epoch}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	targetsKnown, markKnown := context.WithCancel(context.Background())
	defer markKnown()
	targets := make([]uint64, len(ss))
	var reconnects, closedByUs, framesSeen, full503 atomic.Int64
	type result struct {
		session int
		got     []logEntry
		err     error
	}
	results := make([]result, nClients)
	var wg sync.WaitGroup
	for i := range nClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			si := i % len(ss)
			pick := func(attempt int) *gateway { return gws[(i+attempt)%len(gws)] }
			got, err := chaosClient(ctx, pick, ss[si].id, ss[si].epoch, rng, targetsKnown, func() uint64 { return targets[si] },
				&reconnects, &closedByUs, &framesSeen, &full503)
			results[i] = result{si, got, err}
		}()
	}
	var turnWG sync.WaitGroup
	turnErrs := make([]error, len(ss))
	for si := range ss {
		turnWG.Add(1)
		go func() {
			defer turnWG.Done()
			via := gws[(si+1)%len(gws)] // not the owner
			for n := range nTurns {
				text := "chaos turn " + strconv.Itoa(n)
				if n%3 == 2 {
					text = "quick"
				}
				var res struct{ StopReason string }
				code, body, err := via.httpDo(ctx, "POST", "/v1/sessions/"+ss[si].id+"/prompt?wait=true", map[string]string{"text": text}, &res)
				if err != nil || code != http.StatusOK || res.StopReason != "end_turn" {
					turnErrs[si] = fmt.Errorf("turn %d through %s: %d %v %s", n, via.base, code, err, body)
					return
				}
			}
		}()
	}
	turnWG.Wait()
	for si, err := range turnErrs {
		if err != nil {
			markKnown()
			cancel()
			wg.Wait()
			t.Fatalf("session %d: %v", si, err)
		}
	}
	for si := range ss {
		var v sessionJSON
		gws[si].do("GET", "/v1/sessions/"+ss[si].id, nil, &v)
		targets[si] = v.LastSeq
	}
	markKnown()
	wg.Wait()
	for i, r := range results {
		if r.err != nil {
			t.Errorf("client %d: %v", i, r.err)
			continue
		}
		want := gws[r.session].fullLogWS(t, ss[r.session].id, ss[r.session].epoch) // the owner's log
		if uint64(len(r.got)) < targets[r.session] || len(r.got) > len(want) {
			t.Errorf("client %d: %d frames, head %d, the owner's log %d", i, len(r.got), targets[r.session], len(want))
			continue
		}
		for k, e := range r.got {
			if e.Seq != want[k].Seq || !bytes.Equal(e.Raw, want[k].Raw) {
				t.Errorf("client %d: frame %d differs:\n got %d %s\nwant %d %s", i, k, e.Seq, e.Raw, want[k].Seq, want[k].Raw)
				break
			}
		}
	}
	t.Logf("%d clients over %d sessions x %d turns (%v frames), each reconnect on another node: %d reconnects (%d cut by the test), %d frames read, %d dials refused 503",
		nClients, len(ss), nTurns, targets, reconnects.Load(), closedByUs.Load(), framesSeen.Load(), full503.Load())
	if reconnects.Load() < nClients {
		t.Errorf("only %d reconnects: the chaos did not happen", reconnects.Load())
	}
}
