package jsstore_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// TestFeedLeavesNoConsumer: a finished Feed or Follow deletes its consumer on the server. It stayed there for
// the client library's default inactivity threshold (5 minutes): one per hydration and per paused follower.
func TestFeedLeavesNoConsumer(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{})
	l := eventlog.NewLog(eventlog.LogLimits{})
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	appendFrames(t, l, 1, 10, never)
	flush(t, p)
	feedAll(t, st, "s1")
	ctx, cancel := context.WithCancel(ctxT(t))
	go func() { _ = st.Follow(ctx, "s1", func(store.StoredFrame) error { return nil }, cancel) }() // ends once caught up
	<-ctx.Done()
	js, err := jetstream.New(srv.Connect())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "no consumer left on the log stream", func() bool {
		s, err := js.Stream(ctxT(t), "acpgw-log")
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctxT(t))
		return err == nil && info.State.Consumers == 0
	})
}
