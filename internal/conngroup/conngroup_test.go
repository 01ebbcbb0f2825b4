package conngroup

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestJoinAfterCloseIsRefused(t *testing.T) {
	g := New()
	if !g.Join() {
		t.Fatal("join refused on an open group")
	}
	g.Close()
	select {
	case <-g.Closing():
	default:
		t.Fatal("Closing not closed")
	}
	if g.Join() {
		t.Fatal("join accepted after Close")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := g.Wait(ctx); err == nil {
		t.Fatal("Wait returned while a connection is open")
	}
	g.Leave()
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestJoinRacesWait: connections arriving while Wait runs either join before the close or are refused; the
// race detector checks the WaitGroup is never added to while waited on.
func TestJoinRacesWait(t *testing.T) {
	for range 50 {
		g := New()
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if g.Join() {
					g.Leave()
				}
			}()
		}
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
}
