package ws

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// TestStandDownClosesWith1012: a session another node took over (docs/cluster.md §5, isolation) stands down on
// this node, and its sockets close with 1012 "session moved" (reconnect: the stored log serves it), not with
// 1001 as for a gateway going away.
func TestStandDownClosesWith1012(t *testing.T) {
	srv := natstest.Embedded(t)
	logger := slog.New(slog.DiscardHandler)
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := jsstore.Open(ctx, srv.Connect(), jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Join(ctx, jsstore.ClusterOptions{Node: "a", Agents: []string{"demo"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reg, err := sessions.NewRegistry(sessions.Config{Workdir: t.TempDir(), Logger: logger, StopGrace: 200 * time.Millisecond,
		Store: st, NodeID: "a", Cluster: c, DetachIdle: true, DetachOnShutdown: true}, []agents.Spec{spec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = reg.Shutdown(sctx)
	}()
	if err := reg.RunCluster(rctx); err != nil {
		t.Fatal(err)
	}
	s, err := reg.Create(ctx, sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(reg, Options{Logger: logger})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeSession(w, r, s.ID) }))
	defer hs.Close()
	defer h.Shutdown(context.Background())
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()

	// Another node claims the session, as a survivor's takeover does.
	var e store.DirEntry
	var rev uint64
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, rev, err = st.Dir().Get(ctx, s.ID)
		if err == nil && e.Status == store.StatusIdle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("entry: %+v %v", e, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.Closer, e.Status, e.Reason, e.Incarnation = "z", store.StatusFailed, sessions.ReasonNodeLost, ""
	if _, err := st.Dir().Update(ctx, e, rev); err != nil {
		t.Fatal(err)
	}
	for {
		_, _, err = conn.Read(ctx)
		if err != nil {
			break
		}
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusServiceRestart || ce.Reason != "session moved" {
		t.Fatalf("socket ended with %v; want 1012 session moved", err)
	}
}
