package sessions_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/natstest"
	"go.uber.org/goleak"
)

// lateHandler closes late the first time a record says the owner's frames are late.
type lateHandler struct {
	slog.Handler
	once *sync.Once
	late chan struct{}
}

func (h lateHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "frames are late") {
		h.once.Do(func() { close(h.late) })
	}
	return h.Handler.Handle(ctx, r)
}

func (h lateHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return lateHandler{h.Handler.WithAttrs(as), h.once, h.late}
}
func (h lateHandler) WithGroup(g string) slog.Handler {
	return lateHandler{h.Handler.WithGroup(g), h.once, h.late}
}

// TestRoutedPromptWaitsForLateFrames: a prompt through a follower whose copy is behind by more than
// RouteSlack returns the turn the owner started once its frames arrive. It answered 503 owner_unavailable
// ("retry") while the owner ran the turn, so a client that retried prompted twice (gwbench's cluster row hit
// it in CI under load).
func TestRoutedPromptWaitsForLateFrames(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	a := newClusterNode(t, srv, workdir, "a")
	gate := &gatedStore{release: make(chan struct{})}
	late := make(chan struct{})
	b := newClusterNodeConfig(t, srv.Connect(), workdir, "b", func(st store.Store) store.Store { gate.Store = st; return gate },
		func(cfg *sessions.Config) {
			cfg.Logger = slog.New(lateHandler{testLogger("b").Handler(), new(sync.Once), late})
		})
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	// session_ready and the demo's first update, in either order (the agent may send it before the start
	// logs the other)
	eventually(t, "the demo's first update", func() bool { return s.Log().Head() >= 2 })
	gate.open = s.Log().Head() // the follower loads this far; what the prompt logs is held back
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) }) // before goleak's check (cleanups run last first)
	go func() {
		select {
		case <-late: // the follower has waited RouteSlack for the owner's frames
		case <-time.After(30 * time.Second): // a bound, should the warning never come
		case <-stop:
		}
		close(gate.release)
	}()
	turn, err := f.PromptAs(alice, prompt("quick"))
	if err != nil {
		t.Fatalf("prompt through a follower behind its owner: %v", err)
	}
	if cur := s.CurrentTurn(); cur != nil && cur.ID != turn.ID {
		t.Fatalf("node a runs turn %s, node b returned %s", cur.ID, turn.ID)
	}
	if res := turn.Result(); res.Err != nil || res.StopReason != "end_turn" {
		t.Fatalf("the turn through b ended %q, %v", res.StopReason, res.Err)
	}
}
