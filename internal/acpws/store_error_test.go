package acpws

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// feedFailingStore is a real store whose Feed (the load of a restored session) fails.
type feedFailingStore struct{ store.Store }

func (feedFailingStore) Feed(context.Context, string, bool, func(store.StoredFrame) error) (uint64, error) {
	return 0, errors.New("store down")
}

// TestStoreErrorIsNotResourceNotFound: when the store cannot load a restored session, session/load,
// session/resume and session/close answer -32603 (session store unavailable), as docs/websocket.md says, not
// -32002 (resource not found), which would make a client forget a session that still exists.
func TestStoreErrorIsNotResourceNotFound(t *testing.T) {
	srv := natstest.Embedded(t)
	open := func() store.Store {
		st, err := jsstore.Open(context.Background(), srv.Connect(), jsstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	demoSpec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	first, err := sessions.NewRegistry(sessions.Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), StopGrace: time.Second,
		Store: open(), NodeID: "n1", DetachOnShutdown: true}, []agents.Spec{demoSpec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	s, err := first.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	e := newEnvCfg(t, Options{}, sessions.Config{Store: feedFailingStore{open()}, NodeID: "n1", DetachOnShutdown: true})
	if _, err := e.reg.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	cl := e.dial("/acp")
	cl.initialize()
	for _, method := range []string{"session/load", "session/resume", "session/close"} {
		id := cl.request(method, map[string]any{"sessionId": s.ID, "cwd": e.dir, "mcpServers": []any{}})
		_, resp := cl.until(id, nil)
		if resp.Error == nil || resp.Error.Code != jsonrpc.Internal {
			t.Errorf("%s of a session the store cannot load: %s, want -32603", method, resp.raw)
		}
	}
}
