package jsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore/storedlog"
)

// Feed implements store.Store: an ephemeral consumer filtered on the session's subject, read in order
// through storedlog.Folder; a delivery missing on the way fails it.
// Not live, it stops at the last stored message and settles open holes as gaps; live, it keeps going until ctx
// ends and leaves a hole open until the out-of-order buffer overflows (the writer may still fill it).
//
// On a replicated stream it reads up to the leader's last message on the subject (leaderHead), so what a
// quorum stored is read whole through any server.
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
	f := storedlog.NewFolder(s.opts.Inflight, fn)
	head := leaderHead{s: s, sid: sid, check: s.opts.Replicas > 1}
	headReached := false // the feed has read what was stored when it began
	// atHead settles the folder at the log's head: a read that is not live ends there.
	atHead := func() (end bool, err error) {
		headReached = true
		if !live {
			return true, f.Settle()
		}
		if err := f.SettleStart(); err != nil {
			return true, err
		}
		if caughtUp != nil {
			caughtUp()
			caughtUp = nil
		}
		return false, nil
	}
	var fence, delivered uint64
	late := 0       // silences in which the server still had its part (see serverHasPart)
	behind := false // the consumer has nothing pending but has not reached the leader's last message
	if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
		reached, err := head.reached(ctx, 0)
		switch {
		case err != nil:
			return 0, err
		case !reached:
			behind = true
		case !live:
			return 0, nil // nothing stored
		default:
			if _, err := atHead(); err != nil {
				return 0, err
			}
		}
	}
	next := jetstream.NextContext(ctx)
	for {
		var msg jetstream.Msg
		var err error
		if behind {
			msg, err = nextWithin(ctx, it, feedHeartbeat)
			if errors.Is(err, errNothingYet) {
				head.forget() // the subject may have been purged meanwhile: ask the leader again
				reached, err := head.reached(ctx, fence)
				if err != nil {
					return fence, err
				}
				if reached {
					behind = false
					if end, err := atHead(); end || err != nil {
						return fence, err
					}
				}
				continue
			}
		} else {
			msg, err = it.Next(next)
		}
		if err != nil {
			if ctx.Err() != nil && live {
				return fence, nil
			}
			if errors.Is(err, jetstream.ErrNoHeartbeat) {
				if late < latesForgiven && s.serverHasPart(ctx, cons, delivered) {
					late++
					continue // the iterator pulls again; the server's deliveries arrive in order
				}
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
		if err := f.Message(fence, msg.Headers(), msg.Data()); err != nil {
			return fence, err
		}
		if meta.NumPending != 0 {
			continue
		}
		if headReached {
			if err := f.SettleStart(); err != nil { // live: a later run of frames read to its end
				return fence, err
			}
			continue
		}
		reached, err := head.reached(ctx, fence)
		if err != nil {
			return fence, err
		}
		behind = !reached
		if reached {
			if end, err := atHead(); end || err != nil {
				return fence, err
			}
		}
	}
}

// leaderHead is the stream sequence of a subject's last message as the stream's leader holds it. A feed's
// consumer may sit on a replica that was not in the quorum that stored the last frames, and report nothing
// pending before it has them; on a replicated stream the feed reads until it has reached the leader's head.
type leaderHead struct {
	s     *Store
	sid   string
	check bool // a replicated stream: one replica alone has no lag
	read  bool
	seq   uint64
}

// reached reports whether a feed that consumed up to the stream sequence fence has read the leader's head.
func (h *leaderHead) reached(ctx context.Context, fence uint64) (bool, error) {
	if !h.check {
		return true, nil
	}
	if !h.read {
		m, err := leaderLast(ctx, h.s.nc, h.s.opts.logStream(), h.s.opts.logSubject(h.sid))
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			m = lastMsg{}
		case err != nil:
			return false, fmt.Errorf("jsstore: feed %s: the leader's last message: %w", h.sid, err)
		}
		h.read, h.seq = true, m.seq
	}
	return fence >= h.seq, nil
}

// forget makes the next reached ask the leader again.
func (h *leaderHead) forget() { h.read = false }

// errNothingYet is nextWithin's wait ending with no message.
var errNothingYet = errors.New("no message yet")

// nextWithin is it.Next bounded by wait as well as ctx.
func nextWithin(ctx context.Context, it jetstream.MessagesContext, wait time.Duration) (jetstream.Msg, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	msg, err := it.Next(jetstream.NextContext(wctx))
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return nil, errNothingYet
	}
	return msg, err
}

// serverHasPart reports whether a silent feed's server still holds its pull or has sent messages it has not
// read yet. Then the silence was this process or the server running late on a busy machine, not a pull lost
// on the way, and the feed goes on.
func (s *Store) serverHasPart(ctx context.Context, cons jetstream.Consumer, delivered uint64) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*feedHeartbeat)
	defer cancel()
	info, err := cons.Info(ctx)
	return err == nil && (info.NumWaiting > 0 || info.Delivered.Consumer > delivered)
}

// latesForgiven bounds the silences one feed waits out while its server still has its part.
const latesForgiven = 3

// feedInactive is how long the server keeps a feed's consumer that nobody pulls from: the safety net for a
// feed whose dropConsumer did not reach the server (the client library's default is 5 minutes).
const feedInactive = 10 * time.Second

// feedHeartbeat is how often the server tells an idle feed it is there. A feed that hears nothing for twice
// that fails with ErrFeedStalled (a follower logs it and follows again) rather than wait without a word.
const feedHeartbeat = time.Second

// ErrFeedStalled is a feed that heard nothing from the server for twice feedHeartbeat and whose pull the
// server no longer held: a pull lost on the way.
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
