package jsstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// TestCallWaitsForALiveNodesListener: a command to a node that beats but whose command subscription has not
// reached the caller's NATS server yet is sent again until it has, not answered 503 owner_unavailable
// (nobody received it, so it cannot run twice). A node that does not beat is still unavailable at once.
func TestCallWaitsForALiveNodesListener(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	c := join(t, open(t, srv, jsstore.Options{}), "c") // beats, serves nothing yet
	b := join(t, open(t, srv, jsstore.Options{}), "b")
	natstest.Poll(t, "b lists c", 10*time.Millisecond, func() bool {
		for _, n := range b.Nodes() {
			if n.ID == "c" {
				return true
			}
		}
		return false
	})
	ctx, cancel := context.WithTimeout(ctxT(t), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.Call(ctx, "c", store.Command{Op: "echo"})
		done <- err
	}()
	natstest.Poll(t, "a command that found no listener on c", 10*time.Millisecond, func() bool {
		select {
		case err := <-done:
			t.Fatalf("the command to c answered before c served commands: %v", err)
		default:
		}
		return b.CallRetries() > 0
	})
	if err := c.Serve(ctxT(t), errorsByOp); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the command to c once it served: %v", err)
	}
	before := b.CallRetries()
	if _, err := b.Call(ctx, "nobody", store.Command{Op: "echo"}); err == nil || b.CallRetries() != before {
		t.Fatalf("a node that does not beat: %v after %d retries", err, b.CallRetries()-before)
	}
}
