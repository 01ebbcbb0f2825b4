package sessions_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// stuckFollowStore never catches a follower's feed up: its Follow hands its context to started and waits for
// it to end, as a feed on a store that does not answer.
type stuckFollowStore struct {
	store.Store
	started chan context.Context
}

func (s *stuckFollowStore) Follow(ctx context.Context, _ string, _ func(store.StoredFrame) error, _ func()) error {
	s.started <- ctx
	<-ctx.Done()
	return nil
}

// TestFollowerLoadEndsWithShutdown: a follower still loading (its feed has not caught up) when the node shuts
// down has its feed stopped by Shutdown, and the lookup waiting for the load returns. The feed ran on for
// StartTimeout (60 s) after Shutdown returned, and the lookup with it.
func TestFollowerLoadEndsWithShutdown(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	a := newClusterNode(t, srv, workdir, "a")
	stuck := &stuckFollowStore{started: make(chan context.Context, 1)}
	b := newClusterNodeWith(t, srv, workdir, "b", func(st store.Store) store.Store { stuck.Store = st; return stuck })
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := b.reg.GetAs(alice, s.ID)
		got <- err
	}()
	feed := <-stuck.started
	b.stop(t)
	select {
	case <-feed.Done():
	default:
		t.Fatal("the loading follower's feed outlives Shutdown")
	}
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("the load succeeded without its feed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lookup still waits for the load after Shutdown")
	}
}
