package jsstore

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/eventlog"
)

// heldFuture is a publish whose outcome the test decides; like nats.go's future, its Err channel delivers one
// value.
type heldFuture struct {
	ok  chan *jetstream.PubAck
	err chan error
}

func newHeldFuture() *heldFuture {
	return &heldFuture{ok: make(chan *jetstream.PubAck, 1), err: make(chan error, 1)}
}

func (f *heldFuture) Ok() <-chan *jetstream.PubAck { return f.ok }
func (f *heldFuture) Err() <-chan error            { return f.err }
func (f *heldFuture) Msg() *nats.Msg               { return nil }

// A publish that fails is retried after the back-off, not after ackWait: the writer that took the failed
// future's only error must not wait on that future again (it stalled the write-behind for 11 s).
func TestFailedPublishDoesNotWaitForAckWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &persister{
			st: &Store{}, log: eventlog.NewLog(eventlog.LogLimits{MaxFrames: 16}), pin: new(atomic.Uint64),
			advanced: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		}
		w := writer{p: p, lost: time.NewTimer(time.Hour)}
		defer w.lost.Stop()
		failed, later := newHeldFuture(), newHeldFuture()
		now := time.Now()
		w.queue = []inflight{{fut: failed, seq: 1, last: true, sent: now}, {fut: later, seq: 2, last: true, sent: now}}

		failed.err <- errors.New("publish failed: leader election")
		err := w.awaitOldest(nil)
		if err == nil {
			t.Fatal("awaitOldest: no error for a failed publish")
		}
		later.err <- errors.New("publish failed: leader election")
		start := time.Now()
		if err := w.recover(err); err != nil {
			t.Fatalf("recover: %v", err)
		}
		if waited := time.Since(start); waited >= ackWait {
			t.Fatalf("the writer waited %v (ackWait %v) on a publish whose error it had already taken", waited, ackWait)
		}
		if len(w.queue) != 0 || p.Durable() != 0 {
			t.Fatalf("after recover: %d queued, durable %d; want none queued, durable 0", len(w.queue), p.Durable())
		}
	})
}

// Acks that arrive in order before the failed publish still count; none after it does.
func TestDrainCountsOnlyAcksBeforeTheFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &persister{
			st: &Store{}, log: eventlog.NewLog(eventlog.LogLimits{MaxFrames: 16}), pin: new(atomic.Uint64),
			advanced: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		}
		w := writer{p: p, lost: time.NewTimer(time.Hour)}
		defer w.lost.Stop()
		first, second, third := newHeldFuture(), newHeldFuture(), newHeldFuture()
		now := time.Now()
		w.queue = []inflight{
			{fut: first, seq: 1, last: true, sent: now},
			{fut: second, seq: 2, last: true, sent: now},
			{fut: third, seq: 3, last: true, sent: now},
		}
		first.ok <- &jetstream.PubAck{}
		second.err <- errors.New("publish failed")
		third.ok <- &jetstream.PubAck{}
		if err := w.recover(errors.New("the next publish could not be sent")); err != nil {
			t.Fatalf("recover: %v", err)
		}
		if got := p.Durable(); got != 1 {
			t.Fatalf("durable %d after acks for 1 and 3 around a failed 2; want 1", got)
		}
	})
}
