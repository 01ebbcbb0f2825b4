package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Node loss end to end (docs/cluster.md §5): the owner of a session whose turn waits on a permission is
// killed (SIGKILL); a WebSocket client on b and an SSE client on c see the takeover's closing frames in a new
// epoch within 10 s, with every frame up to the stored head once and byte for byte; a restarted a brings the
// session back detached with its whole transcript, and a prompt through b re-attaches it.

// timedEvent is one event of an event stream and when the client read it.
type timedEvent struct {
	id   uint64 // 0 for a note without a seq
	data string
	at   time.Time
}

// sseClient reads an event stream on its own goroutine.
type sseClient struct {
	mu     sync.Mutex
	events []timedEvent
	err    error // why the stream ended; guarded by mu
	done   chan struct{}
	cancel context.CancelFunc
}

func (g *gateway) timedSSE(t *testing.T, path string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	req, _ := http.NewRequestWithContext(ctx, "GET", g.base+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("SSE %s: %v %v", path, err, resp)
	}
	c := &sseClient{done: make(chan struct{}), cancel: cancel}
	go c.read(resp.Body)
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

func (c *sseClient) read(body io.ReadCloser) {
	defer close(c.done)
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var ev timedEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.data != "" {
				ev.at = time.Now()
				c.mu.Lock()
				c.events = append(c.events, ev)
				c.mu.Unlock()
			}
			ev = timedEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.id, _ = strconv.ParseUint(line[len("id: "):], 10, 64)
		case strings.HasPrefix(line, "data: "):
			ev.data = line[len("data: "):]
		}
	}
	c.mu.Lock()
	c.err = sc.Err()
	c.mu.Unlock()
}

func (c *sseClient) snapshot() []timedEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]timedEvent(nil), c.events...)
}

// statusFrame reports whether raw is a _gateway/session_status frame saying status (and reason, if not "").
func statusFrame(raw []byte, status, reason string) bool {
	var f struct {
		Method string `json:"method"`
		Params struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"params"`
	}
	return json.Unmarshal(raw, &f) == nil && f.Method == "_gateway/session_status" && f.Params.Status == status &&
		(reason == "" || f.Params.Reason == reason)
}

// waitREST polls GET path on g (bounded) until cond holds for the decoded session.
func waitREST(t *testing.T, g *gateway, path, what string, within time.Duration, cond func(v map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var v map[string]any
		code := g.do("GET", path, nil, &v)
		if code == http.StatusOK && cond(v) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s never held: %d %v", g.base, what, code, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func clusterKillOwner(t *testing.T, gws []*gateway, nodes []*clusterNode) {
	a, b, c := gws[0], gws[1], gws[2]
	s := a.createSession(map[string]any{"permissionPolicy": "ask"})
	path := "/v1/sessions/" + s.ID
	onB := b.dial(path + "/ws")
	onC := c.timedSSE(t, path+"/events")

	// A turn through b waits on its permission; a has stored every frame it logged (the stored head H).
	var started struct {
		TurnID string `json:"turnId"`
	}
	if code := b.do("POST", path+"/prompt", `{"prompt":[{"type":"text","text":"refactor the parser"}]}`, &started); code != http.StatusAccepted || started.TurnID == "" {
		t.Fatalf("prompt through b: %d %+v", code, started)
	}
	onB.waitFor("the permission request on b", isPermissionRequest)
	var h uint64
	deadline := time.Now().Add(20 * time.Second)
	for {
		var v sessionJSON
		var d struct {
			DurableSeq uint64 `json:"durableSeq"`
		}
		a.do("GET", path, nil, &v)
		a.do("GET", path, nil, &d)
		if len(v.PendingPermissions) == 1 && d.DurableSeq == v.LastSeq && len(logged(onB.snapshot())) == int(v.LastSeq) {
			h = v.LastSeq
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a never stored its head with the permission pending: %+v durable %d, b saw %d", v, d.DurableSeq, len(logged(onB.snapshot())))
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := logged(onB.snapshot())

	// kill -9 a: b and c report node_lost within 10 s.
	killedAt := time.Now()
	if err := nodes[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var lostB, lostC time.Duration
	deadline = killedAt.Add(10 * time.Second)
	for lostB == 0 || lostC == 0 {
		if lostB == 0 {
			for _, f := range onB.snapshot() {
				if statusFrame(f.Raw, "failed", "node_lost") {
					lostB = time.Since(killedAt)
				}
			}
		}
		if lostC == 0 {
			for _, e := range onC.snapshot() {
				if statusFrame([]byte(e.data), "failed", "node_lost") {
					lostC = e.at.Sub(killedAt)
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node_lost not reported within 10 s of the kill (b %v, c %v); b's frames:\n%s", lostB, lostC, onB.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("kill -9 of a → node_lost: on b (WebSocket) %v, on c (SSE) %v", lostB.Round(time.Millisecond), lostC.Round(time.Millisecond))
	for _, g := range []*gateway{b, c} {
		waitREST(t, g, path, "status failed/node_lost", 5*time.Second, func(v map[string]any) bool {
			return v["status"] == "failed" && v["statusReason"] == "node_lost"
		})
	}
	<-nodes[0].exited

	// b's log: 1..n once each, the frames up to H as they were, then the closing frames in one new epoch.
	all := logged(onB.snapshot())
	n := checkContiguous(t, all, 1)
	for i, f := range before {
		if string(all[i].Raw) != string(f.Raw) {
			t.Fatalf("frame %d changed after the kill:\n got %s\nwant %s", i+1, all[i].Raw, f.Raw)
		}
	}
	var epoch string
	byNodeLost, ended := false, false
	for _, f := range all[h:] {
		ep := f.Params.Meta.Gateway.Epoch
		if ep == s.Epoch || (epoch != "" && ep != epoch) {
			t.Fatalf("closing frame in epoch %q (the session's %q, the fork's %q): %s", ep, s.Epoch, epoch, f.Raw)
		}
		epoch = ep
		byNodeLost = byNodeLost || f.Method == "_gateway/permission_resolved" && strings.Contains(string(f.Raw), `"by":"node_lost"`)
		ended = ended || f.Method == "_gateway/turn_ended" && f.Params.TurnID == started.TurnID
	}
	if !byNodeLost || !ended || !statusFrame(all[n-1].Raw, "failed", "node_lost") {
		t.Fatalf("closing frames after H %d: permission resolved by node_lost %v, turn ended %v, last %s", h, byNodeLost, ended, all[n-1].Raw)
	}
	// c's event stream holds the same frames, byte for byte.
	var fromC []timedEvent
	for _, e := range onC.snapshot() {
		if e.id > 0 {
			fromC = append(fromC, e)
		}
	}
	if uint64(len(fromC)) != n {
		t.Fatalf("c's event stream has %d frames, b's socket %d", len(fromC), n)
	}
	for i, e := range fromC {
		if e.id != uint64(i+1) || e.data != string(all[i].Raw) {
			t.Fatalf("c's event %d (id %d):\n got %s\nwant %s", i+1, e.id, e.data, all[i].Raw)
		}
	}

	// a comes back with the same id and server: the session is detached everywhere, with its whole transcript.
	a2, cmd, exited := startChildGateway(t, nodes[0].args...)
	nodes[0].cmd, nodes[0].exited = cmd, exited
	gws[0] = a2
	for _, g := range []*gateway{a2, b, c} {
		waitREST(t, g, path, "status detached", 20*time.Second, func(v map[string]any) bool { return v["status"] == "detached" })
	}
	onA := a2.dial(path + "/ws?after=0")
	onA.waitFor("node returned", func(f frame) bool { return statusFrame(f.Raw, "detached", "node returned") })
	replayed := logged(onA.snapshot())
	if uint64(len(replayed)) != n+1 || !statusFrame(replayed[n].Raw, "detached", "node returned") {
		t.Fatalf("a's transcript: %d frames, b saw %d; the last: %s", len(replayed), n, replayed[len(replayed)-1].Raw)
	}
	for i, f := range all {
		if string(replayed[i].Raw) != string(f.Raw) {
			t.Fatalf("frame %d on the restarted a:\n got %s\nwant %s", i+1, replayed[i].Raw, f.Raw)
		}
	}

	// A prompt through b re-attaches it on a.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res struct{ StopReason string }
	if code, body, err := b.httpDo(ctx, "POST", path+"/prompt?wait=true", map[string]string{"text": "quick"}, &res); err != nil || code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("prompt through b after the return: %d %v %s", code, err, body)
	}
	for _, g := range []*gateway{a2, b, c} {
		waitREST(t, g, path, "status idle", 10*time.Second, func(v map[string]any) bool { return v["status"] == "idle" })
	}
}
