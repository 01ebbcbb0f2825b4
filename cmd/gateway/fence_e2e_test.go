package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// TestPausedOwnerFenced: the owner of eight sessions whose turns are streaming is paused (SIGSTOP) until
// another node has taken them over, then resumed (SIGCONT) with the turns going on. The store refuses what it
// writes after the takeover: every message stored after a session's fork is in the fork's epoch. The resumed
// owner stands the sessions down (their WebSockets close 1012) and serves them, failed by node_lost, like the
// other nodes.
func TestPausedOwnerFenced(t *testing.T) {
	const sessions = 8
	cl := natstest.StartCluster(t, 3)
	var gws []*gateway
	var nodes []*clusterNode
	for i, id := range []string{"a", "b", "c"} {
		n := &clusterNode{args: []string{"--nats-url", cl.URLs[i], "--node-id", id, "--nats-replicas", "3", "--workdir", t.TempDir()}}
		if id == "a" {
			n.args = append(n.args, "--demo-delay", "300ms") // turns that go on streaming after the pause
		}
		var g *gateway
		g, n.cmd, n.exited = startChildGateway(t, n.args...)
		gws, nodes = append(gws, g), append(nodes, n)
	}
	for _, g := range gws {
		waitNodeCount(t, g, 3)
	}
	a, b := gws[0], gws[1]
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("a's log:\n%s", a.logs.String())
		}
	})
	var ss []sessionJSON
	var onA []*wsClient
	for range sessions {
		s := a.createSession(map[string]any{"permissionPolicy": "approve-all"})
		path := "/v1/sessions/" + s.ID
		onA = append(onA, a.dial(path+"/ws"))
		if code := a.do("POST", path+"/prompt", `{"prompt":[{"type":"text","text":"refactor the parser"}]}`, nil); code != http.StatusAccepted {
			t.Fatalf("prompt: %d", code)
		}
		ss = append(ss, s)
	}
	// Paused mid-turn, once a has stored some of each turn's frames.
	for _, s := range ss {
		waitUntil(t, "a storing the turn's first frames", 30*time.Second, func() bool {
			var d struct {
				DurableSeq  uint64 `json:"durableSeq"`
				CurrentTurn *struct {
					TurnID string `json:"turnId"`
				} `json:"currentTurn"`
			}
			return a.do("GET", "/v1/sessions/"+s.ID, nil, &d) == http.StatusOK && d.CurrentTurn != nil && d.DurableSeq >= 3
		})
	}
	if err := nodes[0].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = nodes[0].cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer resume()
	for _, s := range ss {
		waitREST(t, b, "/v1/sessions/"+s.ID, "the takeover (failed/node_lost) on b", 60*time.Second, func(v map[string]any) bool {
			return v["status"] == "failed" && v["statusReason"] == "node_lost"
		})
	}
	t.Logf("takeovers seen on b %s after the pause", time.Since(paused).Round(time.Millisecond))
	resume()

	// a stands the sessions down: their sockets close with 1012, and it answers from the stored log.
	for i, s := range ss {
		if code := onA[i].waitClosed(); code != websocket.StatusServiceRestart {
			t.Fatalf("a's socket closed with %d %q, want 1012", code, onA[i].closeReason())
		}
		// failed/node_lost as the takeover left it; or detached, when a's return (its beats resumed) was
		// handled first (docs/cluster.md §6, "the owner comes back"). Either way a no longer runs it.
		waitREST(t, a, "/v1/sessions/"+s.ID, "failed/node_lost or detached on a", 30*time.Second, func(v map[string]any) bool {
			return v["status"] == "failed" && v["statusReason"] == "node_lost" || v["status"] == "detached"
		})
	}
	t.Logf("a learned of %d takeovers from the store's refusal", strings.Count(a.logs.String(), "the store refused this node's write"))

	// Nothing of a's epochs was stored after the forks.
	for _, s := range ss {
		ids := storedLogIDs(t, cl.URLs[1], s.ID)
		fork := -1
		for i, id := range ids {
			if !strings.HasPrefix(id, s.Epoch+".") {
				fork = i
				break
			}
		}
		if fork < 0 {
			t.Fatalf("no fork in the stored log of %s: %v", s.ID, ids)
		}
		for _, id := range ids[fork:] {
			if strings.HasPrefix(id, s.Epoch+".") {
				t.Fatalf("the paused owner stored %s after the takeover's fork at %s; stored log: %v", id, ids[fork], ids)
			}
		}
	}
}

// storedLogIDs lists the msg-ids ("<epoch>.<seq>[.<part>]") of every message stored on sid's log subject, in
// stream order, read from the NATS server at url (the stream's leader answers each get).
func storedLogIDs(t *testing.T, url, sid string) []string {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	waitUntil(t, "the stored log read", 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, "acpgw-log")
		if err != nil {
			t.Logf("the log stream: %v", err)
			return false
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Logf("the log stream's info: %v", err)
			return false
		}
		ids = ids[:0]
		for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
			subject, id, err := leaderMsg(ctx, nc, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				t.Logf("stream message %d: %v", seq, err)
				return false
			}
			if subject == "acpgw.log."+sid {
				ids = append(ids, id)
			}
		}
		return true
	})
	return ids
}

// leaderMsg reads the log stream's message seq from the stream's leader (a direct get may be answered by a
// replica that is behind): its subject and msg-id.
func leaderMsg(ctx context.Context, nc *nats.Conn, seq uint64) (subject, id string, err error) {
	req, _ := json.Marshal(map[string]uint64{"seq": seq})
	msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.acpgw-log", req)
	if err != nil {
		return "", "", err
	}
	var resp struct {
		Error *struct {
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		Message *struct {
			Subject string `json:"subject"`
			Header  []byte `json:"hdrs"`
		} `json:"message"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return "", "", err
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return "", "", jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return "", "", fmt.Errorf("%s (%d)", resp.Error.Description, resp.Error.ErrCode)
	case resp.Message == nil:
		return "", "", jetstream.ErrInvalidJetStreamResponse
	}
	h, err := nats.DecodeHeadersMsg(resp.Message.Header)
	if err != nil {
		return "", "", err
	}
	return resp.Message.Subject, h.Get(jetstream.MsgIDHeader), nil
}
