package sessions

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestReapIdle: a session with a subscriber or a turn is kept; once idle past the TTL it is closed, within a
// quarter TTL (the check's period). Fake time, so the 30-minute default costs nothing.
func TestReapIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := dlRegistry(t, Config{IdleTTL: 30 * time.Minute})
		ctx, stop := context.WithCancel(context.Background())
		reaped := make(chan struct{})
		go func() { r.ReapIdle(ctx); close(reaped) }()

		watched := dlSession(t, r, "")
		idle := dlSession(t, r, "")
		detach, ok := watched.Attach()
		if !ok {
			t.Fatal("attach refused")
		}
		time.Sleep(38 * time.Minute)
		synctest.Wait()
		if _, err := r.Get(watched.ID); err != nil {
			t.Fatal("a session with a subscriber was reaped")
		}
		select {
		case <-idle.Closed():
		default:
			t.Fatal("an idle session outlived the TTL")
		}

		detach()
		time.Sleep(29 * time.Minute)
		synctest.Wait()
		if _, err := r.Get(watched.ID); err != nil {
			t.Fatal("reaped before the TTL since its last subscriber left")
		}
		time.Sleep(11 * time.Minute)
		synctest.Wait()
		if _, err := r.Get(watched.ID); err == nil {
			t.Fatal("not reaped after the TTL")
		}
		stop()
		<-reaped
		_ = r.Shutdown(context.Background())
	})
}
