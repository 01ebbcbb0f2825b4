package sessions_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// TestStoreShutdownWhileHydrating: a shutdown that runs while a cold session is being loaded from the store
// leaves nothing running: the load that finishes after it starts no write-behind (goleak would find its
// goroutine) and its caller learns that the gateway is stopping (503 shutting_down, not store_unavailable).
func TestStoreShutdownWhileHydrating(t *testing.T) {
	for _, empty := range []bool{false, true} {
		t.Run(map[bool]string{false: "frames", true: "no frames"}[empty], func(t *testing.T) {
			shutdownWhileHydrating(t, empty)
		})
	}
}

func shutdownWhileHydrating(t *testing.T, empty bool) {
	env := newStoreEnv(t)
	ra, _ := env.registry()
	s, err := ra.Create(context.Background(), sessions.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, principal.Principal{}, "1 5")
	shutdownRegistry(t, ra)

	rb, cs := env.registry()
	if _, err := rb.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	hold := &feedHold{entered: make(chan struct{}), release: make(chan struct{}), empty: empty}
	cs.feedHold.Store(hold)
	got := make(chan error, 1)
	go func() {
		_, err := rb.Get(s.ID) // the first use hydrates
		got <- err
	}()
	<-hold.entered
	shutdownRegistry(t, rb) // returns while the load still waits for its frames
	cs.feedHold.Store(nil)
	close(hold.release)
	if err := <-got; !errors.Is(err, sessionerr.ErrShuttingDown) {
		t.Fatalf("a hydration cut short by the shutdown: %v, want sessionerr.ErrShuttingDown", err)
	}
}
