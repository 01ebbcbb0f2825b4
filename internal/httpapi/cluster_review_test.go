package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// Mode c through the REST face: two registries on one embedded JetStream server, each with its own Server.

type clusterAPINode struct {
	reg     *sessions.Registry
	cluster *jsstore.Cluster
	st      *jsstore.Store
	base    string
}

// brokenAgent is an agent whose command exists and is executable but cannot be started: its interpreter does
// not exist (the exec fails with a *fs.PathError naming the gateway's paths).
func brokenAgent(t *testing.T) agents.Spec {
	t.Helper()
	p := filepath.Join(t.TempDir(), "broken-agent")
	if err := os.WriteFile(p, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return agents.Spec{Name: "broken", Kind: agents.KindACP, Command: p}
}

func clusterAPINodeStart(t *testing.T, srv *natstest.Server, workdir, id string, extra ...agents.Spec) *clusterAPINode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jsstore.Open(ctx, srv.Connect(), jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := js.Join(ctx, jsstore.ClusterOptions{Node: id, Agents: []string{"demo"}})
	if err != nil {
		t.Fatal(err)
	}
	demoSpec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	logger := slog.New(slog.DiscardHandler)
	reg, err := sessions.NewRegistry(sessions.Config{
		Workdir: workdir, Logger: logger, StopGrace: 200 * time.Millisecond,
		Store: js, NodeID: id, Cluster: c, DetachIdle: true, DetachOnShutdown: true,
	}, append([]agents.Spec{demoSpec}, extra...), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	if err := reg.RunCluster(rctx); err != nil {
		t.Fatal(err)
	}
	// The REST limits cmd/gateway sets by default (--max-body-bytes, --max-prompt-bytes).
	hs := httptest.NewServer((&Server{Registry: reg, Logger: logger, Metrics: metrics.New(nil), MaxBodyBytes: 4 << 20}).Handler())
	t.Cleanup(func() {
		hs.Close()
		sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer scancel()
		if err := reg.Shutdown(sctx); err != nil {
			t.Errorf("node %s shutdown: %v", id, err)
		}
		rcancel()
		c.Close()
	})
	return &clusterAPINode{reg: reg, cluster: c, st: js, base: hs.URL}
}

func clusterAPI(t *testing.T, extra ...agents.Spec) (a, b *clusterAPINode) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	a = clusterAPINodeStart(t, srv, workdir, "a", extra...)
	b = clusterAPINodeStart(t, srv, workdir, "b", extra...)
	deadline := time.Now().Add(10 * time.Second)
	for len(b.reg.Nodes()) != 2 || len(a.reg.Nodes()) != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the nodes do not see each other")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return a, b
}

// TestClusterCreateStartFailureAsOnOwner: an agent whose process cannot start answers 502 agent_start_failed
// naming only the agent on its node (the reason, which names the gateway's paths, stays in the log). The same
// create routed from another node (`"node": "a"`) must answer the same, not 502 agent_error with the owner's
// exec error (and its paths) in the detail.
func TestClusterCreateStartFailureAsOnOwner(t *testing.T) {
	broken := brokenAgent(t)
	a, b := clusterAPI(t, broken)
	st, local := call(t, "POST", a.base+"/v1/sessions", `{"agent":"broken"}`)
	if st != http.StatusBadGateway || local["code"] != "agent_start_failed" {
		t.Fatalf("create on the owner: %d %v", st, local)
	}
	st, routed := call(t, "POST", b.base+"/v1/sessions", `{"agent":"broken","node":"a"}`)
	if st != http.StatusBadGateway || routed["code"] != local["code"] || routed["detail"] != local["detail"] {
		t.Fatalf("create routed to the owner: %d %v, want as on the owner: %d %v", st, routed, http.StatusBadGateway, local)
	}
	if d, _ := routed["detail"].(string); strings.Contains(d, broken.Command) {
		t.Fatalf("the routed error shows the owner's path: %q", d)
	}
}

// pageOf reads a JSON page of the session's events on base.
func pageOf(t *testing.T, base, id, query string) (frames []json.RawMessage, epoch string, lastSeq float64, notes []any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/sessions/"+id+"/events"+query, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Frames  []json.RawMessage `json:"frames"`
		Epoch   string            `json:"epoch"`
		LastSeq float64           `json:"lastSeq"`
		Notes   []any             `json:"notes"`
	}
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &p) != nil {
		t.Fatalf("page%s: %d %s", query, resp.StatusCode, data)
	}
	return p.Frames, p.Epoch, p.LastSeq, p.Notes
}

func frameEpoch(t *testing.T, frame []byte) string {
	t.Helper()
	var f struct {
		Params struct {
			Meta struct {
				Gateway struct {
					Epoch string `json:"epoch"`
				} `json:"gateway"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(frame, &f); err != nil {
		t.Fatal(err)
	}
	return f.Params.Meta.Gateway.Epoch
}

// TestClusterFollowerPageEpochAfterTakeover: a long-poll page served by a follower names the epoch its
// frames are in. After the owner's log forked (node a left without closing its session: node b took it over
// in a new epoch), a page of the follower must say the new epoch: a client that resumes with the page's
// epoch and lastSeq is replayed, not told to resync on every page.
func TestClusterFollowerPageEpochAfterTakeover(t *testing.T) {
	a, b := clusterAPI(t)
	st, created := call(t, "POST", a.base+"/v1/sessions", `{}`)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, created)
	}
	id := created["id"].(string)
	_, before, _, _ := pageOf(t, b.base, id, "") // the follower on b, loaded in the session's first epoch

	// a's heartbeat key is deleted while its session is live: b takes the session over, in a new epoch.
	a.cluster.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, v := call(t, "GET", b.base+"/v1/sessions/"+id, "")
		if v["status"] == "failed" && v["epoch"] != before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no takeover seen on b: %v", v)
		}
		time.Sleep(20 * time.Millisecond)
	}
	frames, epoch, last, _ := pageOf(t, b.base, id, "")
	if len(frames) == 0 {
		t.Fatal("empty page")
	}
	if fe := frameEpoch(t, frames[len(frames)-1]); epoch != fe {
		t.Fatalf("the page says epoch %q, its last frame is in epoch %q", epoch, fe)
	}
	q := "?after=" + jsonNumber(last) + "&epoch=" + epoch
	if _, _, _, notes := pageOf(t, b.base, id, q); strings.Contains(mustJSON(notes), "resync_required") {
		t.Fatalf("resuming with the page's own epoch and lastSeq: %s", mustJSON(notes))
	}
}

func jsonNumber(f float64) string { b, _ := json.Marshal(f); return string(b) }

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestClusterLargePromptAsOnOwner: a prompt within --max-prompt-bytes (1 MiB by default) that the owner
// accepts is accepted the same through another node. Routed, the command is over the NATS max payload (1 MiB
// by default) and the follower answers 500 internal.
func TestClusterLargePromptAsOnOwner(t *testing.T) {
	a, b := clusterAPI(t)
	// The prompt's block is 50 bytes under the limit; the command that carries it has an envelope too.
	text := strings.Repeat("x", 1<<20-50-len(`{"text":"","type":"text"}`))
	body, _ := json.Marshal(map[string]string{"text": text})
	var codes []int
	for _, n := range []*clusterAPINode{a, b} {
		st, created := call(t, "POST", a.base+"/v1/sessions", `{}`)
		if st != http.StatusCreated {
			t.Fatalf("create: %d %v", st, created)
		}
		st, p := call(t, "POST", n.base+"/v1/sessions/"+created["id"].(string)+"/prompt", string(body))
		t.Logf("prompt through %s: %d %v", n.base, st, p["code"])
		codes = append(codes, st)
	}
	if codes[0] != codes[1] {
		t.Fatalf("the same prompt answered %d on the owner, %d through another node", codes[0], codes[1])
	}
}
