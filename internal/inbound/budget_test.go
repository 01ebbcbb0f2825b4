package inbound

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestBudgetWaitIsBounded: a reader that finds the budget exhausted waits at most the budget's wait for its
// first chunk, and gets it as soon as another reader releases enough.
func TestBudgetWaitIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(100, time.Second)
		if !b.take(context.Background(), 80) {
			t.Fatal("first take refused")
		}
		start := time.Now()
		if b.take(context.Background(), 30) {
			t.Fatal("took more than the total")
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("waited %v, want the budget's wait", waited)
		}

		got := make(chan bool)
		go func() { got <- b.take(context.Background(), 40) }()
		synctest.Wait() // the reader is waiting
		b.give(10)      // not enough yet: it keeps waiting
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("took 40 with only 30 free")
		default:
		}
		time.Sleep(500 * time.Millisecond)
		b.give(70)
		if !<-got {
			t.Fatal("a waiting reader did not get the released budget")
		}
		if b.InUse() != 40 || b.Peak() != 80 {
			t.Fatalf("in use %d, peak %d; want 40, 80", b.InUse(), b.Peak())
		}
	})
}

// TestBudgetWaitEndsWithContext: a socket that ends stops waiting at once.
func TestBudgetWaitEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(10, time.Hour)
		b.take(context.Background(), 10)
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan bool)
		go func() { got <- b.take(ctx, 1) }()
		synctest.Wait()
		cancel()
		if <-got {
			t.Fatal("took budget after the context ended")
		}
	})
}

func TestNilBudgetIsUnlimited(t *testing.T) {
	var b *Budget
	if !b.take(context.Background(), 1<<40) || b.Peak() != 0 || b.InUse() != 0 {
		t.Fatal("nil budget refused or counted")
	}
	b.give(1 << 40)
}
