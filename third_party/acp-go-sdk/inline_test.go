package acp

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"testing"
	"time"
)

// acp-gateway patch: notifications queued before HandleNotificationsInline are handled before the first one
// the reader handles itself, and every seq wait still holds.
func TestInlineNotificationsAfterQueued(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	c := NewConnection(func(ctx context.Context, method string, params json.RawMessage) (any, *RequestError) {
		if method == "n1" {
			<-release
		}
		mu.Lock()
		got = append(got, method)
		mu.Unlock()
		return nil, nil
	}, io.Discard, r)
	send := func(method string) {
		t.Helper()
		if _, err := io.WriteString(w, `{"jsonrpc":"2.0","method":"`+method+`","params":{}}`+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send("n1")
	send("n2")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a measurement
	defer cancel()
	for c.NotificationsRead() < 2 { // n2 is queued behind n1's handler
		if ctx.Err() != nil {
			t.Fatal("n1 and n2 were not read")
		}
		time.Sleep(time.Millisecond)
	}
	c.HandleNotificationsInline()
	send("n3")
	close(release)
	if err := c.WaitNotificationsHandled(ctx, 3); err != nil {
		t.Fatal(err)
	}
	send("n4")
	if err := c.WaitNotificationsHandled(ctx, 4); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"n1", "n2", "n3", "n4"}; !slices.Equal(got, want) {
		t.Fatalf("handled %v, want %v", got, want)
	}
}
