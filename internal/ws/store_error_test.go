package ws

import (
	"context"
	"encoding/json"
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

// feedFailingStore is a real store whose Feed (the load of a restored session) fails.
type feedFailingStore struct{ store.Store }

func (feedFailingStore) Feed(context.Context, string, bool, func(store.StoredFrame) error) (uint64, error) {
	return 0, errors.New("store down")
}

// TestStoreErrorIsNotSessionNotFound: when the store cannot load a restored session, the WebSocket upgrade is
// refused with 503 store_unavailable (Retry-After), as REST and SSE answer, not upgraded and closed with 4004
// (session not found, "do not retry"), which would make a client forget a session that still exists.
func TestStoreErrorIsNotSessionNotFound(t *testing.T) {
	srv := natstest.Embedded(t)
	logger := slog.New(slog.DiscardHandler)
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	registry := func(wrap func(store.Store) store.Store) *sessions.Registry {
		st, err := jsstore.Open(context.Background(), srv.Connect(), jsstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := sessions.NewRegistry(sessions.Config{Workdir: t.TempDir(), Logger: logger, StopGrace: time.Second,
			Store: wrap(st), NodeID: "n1", DetachOnShutdown: true}, []agents.Spec{spec}, "demo")
		if err != nil {
			t.Fatal(err)
		}
		return reg
	}
	shutdown := func(reg *sessions.Registry) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := reg.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	first := registry(func(st store.Store) store.Store { return st })
	s, err := first.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shutdown(first)

	reg := registry(func(st store.Store) store.Store { return feedFailingStore{st} })
	defer shutdown(reg)
	if _, err := reg.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(reg, Options{Logger: logger})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeSession(w, r, s.ID)
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err == nil {
		_, _, rerr := c.Read(ctx)
		c.CloseNow()
		t.Fatalf("upgraded, then %v; want the upgrade refused with 503 store_unavailable", rerr)
	}
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("dial: %v, response %+v; want 503 with Retry-After", err, resp)
	}
	defer resp.Body.Close()
	var p struct{ Code string }
	_ = json.NewDecoder(resp.Body).Decode(&p)
	if p.Code != "store_unavailable" {
		t.Fatalf("problem code %q, want store_unavailable", p.Code)
	}
}
