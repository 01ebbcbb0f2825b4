package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
)

// TestStoreSharesAndPresenceAfterRestart: shares written before a restart come back; a viewer of the restored
// session is counted in its presence with its role, loses its stream when the owner unshares, and the unshare
// itself survives the next restart.
func TestStoreSharesAndPresenceAfterRestart(t *testing.T) {
	env := newStoreEnv(t)
	alice := principal.Principal{ID: "alice", Name: "Alice"}
	bob := principal.Principal{ID: "bob", Name: "Bob"}
	ra, _ := env.registry()
	s, err := ra.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ShareAs(alice, bob.ID, store.ShareViewer); err != nil {
		t.Fatal(err)
	}
	shutdownRegistry(t, ra)

	rb, _ := env.registry()
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := rb.GetAs(bob, s.ID) // the viewer's first use hydrates the cold session
	if err != nil {
		t.Fatalf("the viewer after the restart: %v", err)
	}
	sub, ok := h.AttachAs(bob)
	if !ok {
		t.Fatal("attach")
	}
	defer sub.Detach()
	deadline := time.Now().Add(20 * time.Second)
	for w := h.Watchers(); len(w) != 1 || w[0].Principal != "bob" || w[0].Role != "viewer"; w = h.Watchers() {
		if time.Now().After(deadline) {
			t.Fatalf("watchers of the restored session: %+v", w)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := h.UnshareAs(alice, bob.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.Lost():
	case <-time.After(20 * time.Second):
		t.Fatal("the unshared viewer kept its stream")
	}
	shutdownRegistry(t, rb)

	rc, _ := env.registry()
	defer shutdownRegistry(t, rc)
	if _, err := rc.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.GetAs(bob, s.ID); err == nil {
		t.Fatal("the unshare did not survive the restart")
	}
	if _, err := rc.GetAs(alice, s.ID); err != nil {
		t.Fatalf("the owner after the restart: %v", err)
	}
}
