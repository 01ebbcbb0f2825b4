package httpapi

import (
	"context"
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
	hs := httptest.NewServer((&Server{Registry: reg, Logger: logger, Metrics: metrics.New(nil)}).Handler())
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
	return &clusterAPINode{reg: reg, cluster: c, base: hs.URL}
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
