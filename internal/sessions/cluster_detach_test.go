package sessions_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
)

// TestDetachOnAFollowerIsNotReady: a node that follows another's session runs no agent for it, so a detach
// there has nothing to stop (it stopped the missing agent and panicked).
func TestDetachOnAFollowerIsNotReady(t *testing.T) {
	a, b := newCluster(t)
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatalf("node b: %v", err)
	}
	eventually(t, "the follower idle", func() bool { return f.Status() == store.StatusIdle })
	if err := b.reg.Detach(s.ID, "test"); !errors.Is(err, sessionerr.ErrNotReady) {
		t.Fatalf("detach on the follower: %v, want ErrNotReady", err)
	}
	if s.Status() != store.StatusIdle {
		t.Fatalf("the owner's session is %s after a detach on its follower", s.Status())
	}
}
