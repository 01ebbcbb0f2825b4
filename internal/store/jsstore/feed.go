package jsstore

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// Feed implements store.Store: an ordered consumer filtered on the session's subject, read through fold.
// Not live, it stops at the last stored message and settles open holes as gaps; live, it keeps going until ctx
// ends and leaves a hole open until the out-of-order buffer overflows (the writer may still fill it).
func (s *Store) Feed(ctx context.Context, sid string, live bool, fn func(store.StoredFrame) error) (uint64, error) {
	return s.feed(ctx, sid, live, fn, nil)
}

// Follow implements store.Store: a live Feed that calls caughtUp once, when it has read what was stored
// when it began (at once for an empty log). It returns when ctx ends (nil) or the read fails.
func (s *Store) Follow(ctx context.Context, sid string, fn func(store.StoredFrame) error, caughtUp func()) error {
	_, err := s.feed(ctx, sid, true, fn, caughtUp)
	return err
}

func (s *Store) feed(ctx context.Context, sid string, live bool, fn func(store.StoredFrame) error, caughtUp func()) (uint64, error) {
	if err := checkSID(sid); err != nil {
		return 0, err
	}
	cons, err := s.js.OrderedConsumer(ctx, s.opts.logStream(), jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{s.opts.logSubject(sid)},
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: feedInactive,
	})
	if err != nil {
		return 0, fmt.Errorf("jsstore: feed %s: %w", sid, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return 0, fmt.Errorf("jsstore: feed %s: %w", sid, err)
	}
	defer s.dropConsumer(cons) // after the iterator stops
	defer it.Stop()
	if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
		if !live {
			return 0, nil // nothing stored
		}
		if caughtUp != nil {
			caughtUp()
			caughtUp = nil
		}
	}
	f := newFolder(s.opts.Inflight, fn)
	var fence uint64
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil && live {
				return fence, nil
			}
			return fence, fmt.Errorf("jsstore: feed %s: %w", sid, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fence, fmt.Errorf("jsstore: feed %s: %w", sid, err)
		}
		fence = meta.Sequence.Stream
		if r, err := parseRecord(fence, msg.Headers(), msg.Data()); err != nil {
			f.anomalies++
		} else if err := f.fold(r); err != nil {
			return fence, err
		}
		if meta.NumPending == 0 {
			if !live {
				return fence, f.settle()
			}
			if err := f.settleStart(); err != nil {
				return fence, err
			}
			if caughtUp != nil {
				caughtUp()
				caughtUp = nil
			}
		}
	}
}

// feedInactive is how long the server keeps a feed's consumer that nobody pulls from: the safety net for a
// feed whose dropConsumer did not reach the server (the client library's default is 5 minutes).
const feedInactive = 10 * time.Second

// dropConsumer deletes a finished feed's consumer at once: a hydration or a paused follower leaves nothing
// on the server.
func (s *Store) dropConsumer(cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.js.DeleteConsumer(ctx, s.opts.logStream(), info.Name)
}
