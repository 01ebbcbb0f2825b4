package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
	"github.com/acp-gateway/gateway/internal/store"
)

// A Follower is this node's copy of a session another node owns (mode c, docs/cluster.md §5). Every face
// serves it as it serves a local session: its log is fed from the store's log of the session (Store.Follow),
// folded by the same restore code a restart uses, and its commands are routed to the owner (route.go). It
// never writes the store: it has no durable.
//
// A follower starts cold, listed from its directory entry; its first use starts the live feed and waits until
// the feed has read what was stored. Its status is what the frames it folded state (status.go); directory
// changes update only what the log does not carry (modes, config options, shares) and what a cold copy lists.

type Follower struct {
	s    *core.Session // Static after construction; the copy this follower feeds.
	host Host          // Static after construction; the registry that lists the copy.
	cfg  *Config       // Static after construction.
	node string        // Guarded by the session's mu: the owner, as the directory last said.
	// progress is closed and replaced (under the session's mu) when a frame is applied and someone took it
	// (waited): a routed command waits on it until the owner's frames have arrived. A flood nobody waits on
	// costs no channel per frame.
	progress      chan struct{}
	progressTaken bool               // Guarded by the session's mu.
	stop          context.CancelFunc // Guarded by the session's mu; ends the live feed, nil while cold.
	done          chan struct{}      // Guarded by the session's mu; closed when the live feed returns.
}

// feedRetry bounds the back-off of a follower's live feed after the store failed it (Retry).
const (
	feedRetryMin = 100 * time.Millisecond
	feedRetryMax = 5 * time.Second
)

// New makes the cold session s, built from e at revision rev, a copy of another node's session: its
// runner is a Runner from now on.
func New(h Host, cfg *Config, s *core.Session, e store.DirEntry, rev uint64) *Follower {
	f := &Follower{s: s, host: h, cfg: cfg, node: e.Owner, progress: make(chan struct{})}
	core.ControlOf(s).InitCopy(Runner{f}, e, rev)
	return f
}

// Of is the follower of a copy of another node's session; nil for a session this node runs.
func Of(s *core.Session) *Follower {
	if r, ok := core.ControlOf(s).Runner().(Runner); ok {
		return r.f
	}
	return nil
}

// Node is the session's owner, as the directory last said.
func (f *Follower) Node() string {
	var node string
	core.ControlOf(f.s).WithLock(func() { node = f.node })
	return node
}

// load starts the live feed of a cold follower and returns once it has read the stored log (bounded by
// StartTimeout). A feed that fails later is started again, from the start of the stored log: frames the
// follower already holds are skipped.
func (f *Follower) load() error {
	s := f.s
	c := core.ControlOf(s)
	ctx, cancel := context.WithCancel(context.Background())
	caught := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	var err error
	c.WithLock(func() {
		if err = f.host.StoppedLocked(s); err == nil {
			f.stop, f.done = cancel, done // a shutdown or a close while it loads stops the feed and waits for it
		}
	})
	if err != nil {
		cancel()
		return err
	}
	go func() {
		defer close(done)
		f.runFeed(ctx, func() { once.Do(func() { close(caught) }) })
	}()
	timer := time.NewTimer(f.cfg.StartTimeout)
	defer timer.Stop()
	select {
	case <-caught:
	case <-done: // stopped before it caught up
		c.WithLock(func() { err = f.host.StoppedLocked(s) })
		if err != nil {
			return err
		}
		return sessionerr.ErrClosed
	case <-timer.C:
		cancel()
		<-done
		return fmt.Errorf("%w: the session's log did not load in %s", sessionerr.ErrStoreUnavailable, f.cfg.StartTimeout)
	}
	c.WithLock(func() {
		if err = f.host.StoppedLocked(s); err != nil {
			cancel()
			return
		}
		c.WarmCopyLocked()
	})
	return err
}

// runFeed follows the stored log until ctx ends, starting over after a failure.
func (f *Follower) runFeed(ctx context.Context, caughtUp func()) {
	s := f.s
	Retry(ctx, func() error { return f.cfg.Store.Follow(ctx, s.ID, f.applyStored, caughtUp) }, func(err error, wait time.Duration) {
		core.ControlOf(s).SessionLogger().Warn("follower feed failed; following again", "err", err, "in", wait)
	})
}

// Retry runs run until ctx ends, again after each return with a back-off from feedRetryMin to feedRetryMax;
// failed hears each return before its wait. The follower's feed and the registry's directory watch use it.
func Retry(ctx context.Context, run func() error, failed func(err error, wait time.Duration)) {
	wait := feedRetryMin
	for {
		err := run()
		if ctx.Err() != nil {
			return
		}
		failed(err, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, feedRetryMax)
	}
}

// applyStored folds one stored frame into the follower: the log, then the state the frame changes. A frame it
// holds already (a feed started over) is skipped; a gap needs no call (Put restarts the ring after it).
func (f *Follower) applyStored(fr store.StoredFrame) error {
	if fr.GapTo > 0 {
		return nil
	}
	return core.ControlOf(f.s).ApplyCopiedFrame(fr.Seq, fr.Frame, func(closed bool) {
		if f.progressTaken {
			close(f.progress)
			f.progress, f.progressTaken = make(chan struct{}), false
		}
		if closed {
			go f.closeGone()
		}
	})
}

// closeGone ends the follower of a session whose log says closed. A closed session never opens again, so
// it is tombstoned for good first: a directory entry written before the close, which the watch may still
// deliver, must not list it again.
func (f *Follower) closeGone() {
	s := f.s
	f.host.Tombstone(s.ID)
	f.Close()
}

// awaitHead waits (at most RouteSlack) until the follower holds the owner's log up to head, so what a routed
// command did (a turn started, a permission resolved) is visible here when it returns.
func (f *Follower) AwaitHead(ctx context.Context, head uint64) {
	s := f.s
	if f.awaitCopy(ctx, store.RouteSlack, func() bool { return s.Log().Head() >= head || core.ControlOf(s).ClosingLocked() }) == errCopyLate {
		core.ControlOf(s).SessionLogger().Warn("follower: the owner's frames are late", "want", head, "have", s.Log().Head())
	}
}

// storeCheck is how often a follower waiting for the owner's frames asks whether the store can deliver them.
const storeCheck = 500 * time.Millisecond

// errCopyLate is awaitCopy's answer when its bound passed first.
var errCopyLate = errors.New("follower: the owner's frames are late")

// awaitCopy waits (at most bound) until done, checked under mu whenever the follower applies a frame, holds.
// It answers nil when it does, errCopyLate when the bound passed, and ctx's or the session's end otherwise.
//
// It also gives up (errCopyLate) once the store cannot make progress: the frames it waits for cannot come
// until the cluster has its quorum back, and a client should hear so within storeCheck, not the bound.
func (f *Follower) awaitCopy(ctx context.Context, bound time.Duration, done func() bool) error {
	s := f.s
	timer := time.NewTimer(bound)
	defer timer.Stop()
	check := time.NewTicker(storeCheck)
	defer check.Stop()
	for {
		var ok bool
		var progress chan struct{}
		core.ControlOf(s).WithLock(func() {
			ok, progress = done(), f.progress
			f.progressTaken = true
		})
		if ok {
			return nil
		}
		select {
		case <-progress:
		case <-s.Closed():
			return sessionerr.ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return errCopyLate
		case <-check.C:
			if !f.host.StoreHealthy() {
				return errCopyLate
			}
		}
	}
}

// applyEntry takes what a directory change says that the log does not: the owner, modes, config options, the
// agent's info, shares. A cold follower lists from the entry (its title, last turn and status); the status a
// copy acts on is only ever its frames'. Shares older than the copy's (rev: a lookup read a newer entry than
// the watch delivers, or a share made through this node) are not taken.
func (f *Follower) ApplyEntry(e store.DirEntry, rev uint64) {
	var dv views.DirView
	if len(e.View) > 0 && json.Unmarshal(e.View, &dv) != nil {
		return
	}
	s := f.s
	c := core.ControlOf(s)
	c.WithLock(func() {
		f.node = e.Owner
		c.ApplyCopiedEntryLocked(e, dv, rev)
	})
	c.TakeCopiedShares(e.Shares, rev)
}

// close ends the follower (its session was closed or removed): the feed stops, the log closes, faces close
// their sockets as for a closed session, and the registry forgets it.
func (f *Follower) Close() {
	s := f.s
	c := core.ControlOf(s)
	c.EndOnce(func() {
		var stop context.CancelFunc
		c.WithLock(func() {
			c.CloseCopyLocked()
			stop = f.stop
		})
		if stop != nil {
			stop() // not waited for: applyStored, on the feed's goroutine, may be what called this
		}
		f.host.Forget(s) // before Closed fires: a lookup after it no longer finds this copy
		c.EndCopy()
	})
	<-s.Closed()
}

// pause stops the live feed of a follower nobody used since cutoff (no subscriber, no turn, no lookup): it
// goes cold, keeping its copy of the log, so the store serves one consumer fewer. Its next use feeds it again
// from the store (frames it holds are skipped) before it answers. It reports whether it paused.
func (f *Follower) Pause(cutoff time.Time) bool {
	s := f.s
	c := core.ControlOf(s)
	var stop context.CancelFunc
	var done chan struct{}
	c.WithLock(func() {
		if f.stop == nil || !c.UnusedSinceLocked(cutoff) {
			return
		}
		stop, done = f.stop, f.done
		f.stop, f.done = nil, nil
		c.PauseCopyLocked()
	})
	if stop == nil {
		return false
	}
	stop()
	<-done
	c.RelistPausedCopy() // the feed may have applied a frame meanwhile
	return true
}

// shutdown ends the follower's feed and closes its log at shutdown, waiting for the feed to return.
func (f *Follower) Shutdown() {
	s := f.s
	var stop context.CancelFunc
	var done chan struct{}
	core.ControlOf(s).WithLock(func() {
		core.ControlOf(s).MarkClosingLocked()
		stop, done = f.stop, f.done
	})
	if stop != nil {
		stop()
		<-done
	}
	s.Log().Close()
}

// Hydrate notes a face's use (a copy in use is not paused: follower.pause) and starts the live feed of a cold
// copy.
func (r Runner) Hydrate() error {
	s := r.f.s
	core.ControlOf(s).NoteUsed(r.f.host.Now())
	return core.ControlOf(s).HydrateWith(r.f.load)
}

// CurrentEpoch is the chain's last link: the owner's log may have forked since the copy was loaded (a
// takeover), and applyStored extends the chain under mu.
func (r Runner) CurrentEpoch() string { return core.ControlOf(r.f.s).LastEpoch() }

func (r Runner) EpochLocked() string { return core.ControlOf(r.f.s).LastEpochLocked() }

// AwaitResume waits (at most RouteSlack) for the copy to reach after, when the client resumes in the copy's
// epoch: it read those frames from the owner or a faster node, and the copy is a moment behind rather than
// the cursor invalid.
func (r Runner) AwaitResume(after uint64, epoch string) {
	if epoch == "" || epoch == r.CurrentEpoch() {
		r.f.AwaitHead(context.Background(), after)
	}
}

// PlaceLocked: the owner's node, and everything the copy holds came from the store.
func (r Runner) PlaceLocked(v *views.View) {
	d := v.LastSeq
	v.DurableSeq = &d
	if r.f.cfg.Clustered {
		v.Node = r.f.node
	}
}
