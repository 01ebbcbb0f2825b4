package demo

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/acp-go-sdk"
)

func TestServeReturnsNilOnEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		h.newSession()
		if err := h.stop(); err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
	})
}

func TestServeReturnsOnEOFDuringTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{Delay: time.Hour}, &testClient{})
		sid := h.newSession()
		result := h.startPrompt(sid, fullPrompt)
		synctest.Wait() // the turn is pausing for an hour
		start := time.Now()
		if err := h.stop(); err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Serve took %v of (fake) time to return, want it to stop the pause", d)
		}
		// The response may or may not make it out before the pipe closes.
		if r := <-result; r.err == nil && r.stop != acp.StopReasonCancelled {
			t.Errorf("prompt = %q, want cancelled or a disconnect error", r.stop)
		}
	})
}

func TestServeStopsWhenContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		asked, withdrawn := make(chan struct{}, 1), make(chan struct{})
		h := newHarness(t, ctx, Options{}, blockingClient(asked, nil, withdrawn))
		sid := h.newSession()
		result := h.startPrompt(sid, fullPrompt)
		<-asked
		cancel()
		if err := h.waitServed(); !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
		r := <-result
		if r.err == nil && r.stop != acp.StopReasonCancelled {
			t.Errorf("prompt = %q, %v; want cancelled or a disconnect error", r.stop, r.err)
		}
	})
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestServeReportsReadError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		if err := Serve(context.Background(), Options{}, failingReader{boom}, io.Discard); !errors.Is(err, boom) {
			t.Errorf("Serve = %v, want %v", err, boom)
		}
	})
}
