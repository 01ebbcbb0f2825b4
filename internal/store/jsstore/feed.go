package jsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// Feed implements store.Store: an ephemeral consumer filtered on the session's subject, read in order
// through fold; a delivery missing on the way fails it.
// Not live, it stops at the last stored message and settles open holes as gaps; live, it keeps going until ctx
// ends and leaves a hole open until the out-of-order buffer overflows (the writer may still fill it).
//
// A read that stalls (ErrFeedStalled) is read again, at most feedAttempts times in all; the frames fn already
// had are not given to it twice.
func (s *Store) Feed(ctx context.Context, sid string, live bool, fn func(store.StoredFrame) error) (uint64, error) {
	var done uint64 // the last seq fn was given, a gap's end included
	once := func(f store.StoredFrame) error {
		end := max(f.Seq, f.GapTo)
		if end <= done {
			return nil
		}
		done = end
		return fn(f)
	}
	for attempt := 1; ; attempt++ {
		fence, err := s.feed(ctx, sid, live, once, nil)
		if !errors.Is(err, ErrFeedStalled) || attempt == feedAttempts || ctx.Err() != nil {
			return fence, err
		}
	}
}

// feedAttempts bounds how often Feed reads a log again after a stall.
const feedAttempts = 3

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
	cons, err := s.js.CreateConsumer(ctx, s.opts.logStream(), jetstream.ConsumerConfig{
		FilterSubjects:    []string{s.opts.logSubject(sid)},
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: feedInactive,
	})
	if err != nil {
		return 0, fmt.Errorf("jsstore: feed %s: %w", sid, err)
	}
	defer s.dropConsumer(cons) // after the iterator stops
	it, err := cons.Messages(jetstream.PullHeartbeat(feedHeartbeat), jetstream.WithMessagesErrOnMissingHeartbeat(true))
	if err != nil {
		return 0, fmt.Errorf("jsstore: feed %s: %w", sid, err)
	}
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
	var fence, delivered uint64
	next := jetstream.NextContext(ctx)
	for {
		msg, err := it.Next(next)
		if err != nil {
			if ctx.Err() != nil && live {
				return fence, nil
			}
			if errors.Is(err, jetstream.ErrNoHeartbeat) {
				s.feedStalls.Add(1)
				return fence, fmt.Errorf("jsstore: feed %s: %w: nothing from the server, not even a heartbeat, for %s", sid, ErrFeedStalled, 2*feedHeartbeat)
			}
			return fence, fmt.Errorf("jsstore: feed %s: %w", sid, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fence, fmt.Errorf("jsstore: feed %s: %w", sid, err)
		}
		if meta.Sequence.Consumer != delivered+1 {
			return fence, fmt.Errorf("jsstore: feed %s: delivery %d after %d: messages were lost on the way", sid, meta.Sequence.Consumer, delivered)
		}
		delivered = meta.Sequence.Consumer
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

// feedHeartbeat is how often the server tells an idle feed it is there. A feed that hears nothing for twice
// that fails with ErrFeedStalled (a follower logs it and follows again) rather than wait without a word.
const feedHeartbeat = time.Second

// ErrFeedStalled is a feed that heard nothing from the server for twice feedHeartbeat: a pull lost on the way.
var ErrFeedStalled = errors.New("the store's feed stalled")

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
