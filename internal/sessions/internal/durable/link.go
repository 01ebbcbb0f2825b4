package durable

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// A session in a store mode (docs/cluster.md §4) has a Link: the write-behind of its log (a Persister)
// and one goroutine that keeps its directory entry up to date, coalescing every change to the latest state
// and writing off the session's lock. Memory mode has none (the local runner's dur is nil) and pays nothing.

// DirWriteTimeout bounds one directory write (and the flush before a detached entry is written).
const DirWriteTimeout = 10 * time.Second

type Link struct {
	s    *core.Session // Static after construction; the session whose entry and log this link stores.
	host Host          // Static after construction; the registry that holds s.
	cfg  *Config       // Static after construction.
	st   store.Store   // Static after construction.
	wake chan struct{} // Static after construction; capacity 1: a pending "the entry is stale".
	stop chan struct{} // Static after construction; closed by stopWriter.
	done chan struct{} // Static after construction; closed when the writer returns.
	// ctx bounds the writer's store calls; cancel (stopWriter) ends one in progress, so a store that does not
	// answer cannot hold up a shutdown or a close.
	ctx    context.Context
	cancel context.CancelFunc

	// dirty is set by noteDir and cleared by a write that stored it: a change whose write a stop cut short
	// is still written at shutdown.
	dirty    atomic.Bool
	stopOnce sync.Once
	mu       sync.Mutex
	pers     store.Persister // Guarded by mu; nil while the session is cold.
	from     uint64          // Guarded by mu; the seq pers started after (its stored frames are Durable() - from).
	retired  bool            // Guarded by mu; pers stopped and its counters went to the registry's retired ones.
	// stopped is set by stopWriter: whoever stopped the writer has taken pers as it was (a shutdown or a
	// close), so a hydration that ends later must not start another one.
	stopped bool // Guarded by mu.
	// rev is the entry's revision as last written: the writer owns it while it runs, then stopWriter's
	// caller.
	rev uint64
	// changes counts noteDir calls. The writer's last stored write held the first storedChanges of them, at
	// revision storedRev; it closes stored (then replaces it) after each write: dirRevision waits on them.
	changes       atomic.Uint64
	storedChanges uint64        // Guarded by mu.
	storedRev     uint64        // Guarded by mu.
	stored        chan struct{} // Guarded by mu.
}

// New is the store link of s, whose entry is at revision rev (0: not created yet). It starts nothing: Create
// or RunWriter does.
func New(h Host, cfg *Config, s *core.Session, rev uint64) *Link {
	d := &Link{s: s, host: h, cfg: cfg, st: cfg.Store, rev: rev, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), stored: make(chan struct{})}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d
}

func (d *Link) persister() store.Persister {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pers
}

func (d *Link) setPersister(p store.Persister, from uint64) {
	d.mu.Lock()
	d.pers, d.from = p, from
	d.mu.Unlock()
}

// startPersister starts the write-behind of l after seq from, unless the writer was stopped (a shutdown or a
// close got to the session first and would never stop it): false then.
func (d *Link) startPersister(sid, epoch string, l *eventlog.Log, from uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return false
	}
	d.pers, d.from = d.st.Persist(sid, epoch, l, from), from
	return true
}

// watchFence stands the session down when the store refuses its write-behind: another node appended to the
// log (it took the session over) while this node still ran it, as after a pause longer than the heartbeat
// TTL. It returns when the writer is stopped.
func (d *Link) watchFence(p store.Persister) {
	if p == nil {
		return
	}
	s := d.s
	select {
	case <-p.Fenced():
		core.ControlOf(s).SessionLogger().Warn("the store refused this node's write to the session's log: another node took the session over; standing it down",
			"durable", p.Durable(), "head", s.Log().Head())
		d.host.StandDown(s)
	case <-d.stop:
	}
}

// stats is the persister's, with the frames it stored; zero for a cold session.
func (d *Link) Stats() (store.PersistStats, uint64) {
	d.mu.Lock()
	p, from, retired := d.pers, d.from, d.retired
	d.mu.Unlock()
	if p == nil || retired {
		return store.PersistStats{}, 0
	}
	return p.Stats(), p.Durable() - from
}

// durableSeq is the seq up to which the store holds the log: the persister's, or head for a cold session
// (everything it has came from the store).
func (d *Link) DurableSeq(head uint64) uint64 {
	if p := d.persister(); p != nil {
		return p.Durable()
	}
	return head
}

// runWriter is the session's directory writer: on each wake it writes the entry as the session is now. A
// failed write is retried a second later (the latest state again).
func (d *Link) RunWriter() {
	s := d.s
	defer close(d.done)
	var retry <-chan time.Time
	for {
		select {
		case <-d.stop:
			return
		case <-d.wake:
		case <-retry:
		}
		retry = nil
		d.dirty.Store(false)
		changes := d.changes.Load() // the entry is read after: it holds every change counted so far
		ctx, cancel := context.WithTimeout(d.ctx, DirWriteTimeout)
		err := d.write(ctx)
		cancel()
		if err == nil {
			d.mu.Lock()
			d.storedChanges, d.storedRev = changes, d.rev
			close(d.stored)
			d.stored = make(chan struct{})
			d.mu.Unlock()
		}
		if errors.Is(err, errTakenOver) {
			core.ControlOf(s).SessionLogger().Warn("directory write refused", "err", err)
			go d.host.StandDown(s) // it stops this writer first: this goroutine must have returned
			return
		}
		if err != nil {
			d.dirty.Store(true)
			if d.ctx.Err() != nil {
				return // stopped mid-write: whoever stopped the writer writes what is left
			}
			core.ControlOf(s).SessionLogger().Warn("directory write failed; retrying", "err", err)
			retry = time.After(time.Second)
		}
	}
}

// dirRevision waits (within ctx) until the writer stored every change noted before the call, and returns the
// entry's revision then: the revision a follower's copy must reach to hold them. 0 when it could not tell
// (the writer stopped, or ctx ended) and in memory mode (d is nil).
func (d *Link) DirRevision(ctx context.Context) uint64 {
	if d == nil {
		return 0
	}
	want := d.changes.Load()
	for {
		d.mu.Lock()
		rev, ok, stored, stopped := d.storedRev, d.storedChanges >= want, d.stored, d.stopped
		d.mu.Unlock()
		switch {
		case ok:
			return rev
		case stopped:
			return 0
		}
		select {
		case <-stored:
		case <-d.stop:
		case <-ctx.Done():
			return 0
		}
	}
}

func (d *Link) stopWriter() {
	d.stopOnce.Do(func() {
		d.mu.Lock()
		d.stopped = true
		d.mu.Unlock()
		close(d.stop)
		d.cancel()
	})
	<-d.done
}

// write stores the session's entry. A detached or failed session is flushed first, so its entry can say
// clean. A lost compare-and-swap is retried once against the current revision when this node still owns the
// entry (mode b has one writer per entry; the janitor or a DELETE may have removed it), and no other node is
// closing it. In mode c it must also still name this process: a takeover clears the incarnation, and a
// stale owner coming back must not overwrite it (errTakenOver: the session stands down).
func (d *Link) write(ctx context.Context) error {
	s := d.s
	if p := d.persister(); p != nil {
		if st := s.Status(); st == store.StatusDetached || st == store.StatusFailed {
			_ = p.Flush(ctx) // not flushed in time: the entry says unclean
		}
	}
	e := d.Entry()
	dir := d.st.Dir()
	rev, err := dir.Update(ctx, e, d.rev)
	if errors.Is(err, store.ErrRevision) {
		cur, crev, gerr := dir.Get(ctx, s.ID)
		if gerr != nil {
			return gerr
		}
		if cur.Owner != e.Owner {
			return fmt.Errorf("entry of %s is owned by %q now", s.ID, cur.Owner)
		}
		if cur.Closer != "" && cur.Closer != d.cfg.NodeID {
			return fmt.Errorf("%w: node %q is closing it", errTakenOver, cur.Closer)
		}
		if d.cfg.Clustered && cur.Incarnation != e.Incarnation {
			return fmt.Errorf("%w: its entry says %s %q (this process is %q)", errTakenOver, cur.Status, cur.Reason, e.Incarnation)
		}
		rev, err = dir.Update(ctx, e, crev)
	}
	if err != nil {
		return err
	}
	d.rev = rev
	return nil
}

// entry is the session's directory entry as of now. Clean says the store holds the whole log of a session
// whose agent is not running.
func (d *Link) Entry() store.DirEntry {
	s := d.s
	e := core.ControlOf(s).DirEntry()
	e.Owner, e.Incarnation, e.UpdatedAt = d.cfg.NodeID, d.cfg.Incarnation, d.host.Now().UTC()
	if e.Status == store.StatusDetached || e.Status == store.StatusFailed {
		e.Clean = d.DurableSeq(e.LastSeq) >= e.LastSeq
	}
	return e
}

// create creates the entry of a new session (status starting) and starts the write-behind of its log and
// its directory writer. The runner holds d already (before the session was shared).
func (d *Link) Create(ctx context.Context) error {
	s := d.s
	ctx, cancel := context.WithTimeout(ctx, DirWriteTimeout)
	defer cancel()
	rev, err := d.st.Dir().Create(ctx, d.Entry())
	if err != nil {
		close(d.done) // no writer will run: a Close waiting in stopWriter must not hang
		return fmt.Errorf("%w: %v", sessionerr.ErrStoreUnavailable, err)
	}
	d.rev = rev
	p := d.st.Persist(s.ID, s.Epoch, s.Log(), 0)
	d.setPersister(p, 0)
	go d.RunWriter()
	go d.watchFence(p)
	return nil
}

// finish ends the session's store link at shutdown: the log is flushed within ctx and the entry written
// one last time (detached, clean when the store holds every frame). A cold session's entry is written only
// if it changed (its shares).
func (d *Link) Finish(ctx context.Context) {
	s := d.s
	d.stopWriter()
	p := d.persister()
	if p == nil && !d.dirty.Load() {
		return
	}
	if p != nil {
		if err := p.Flush(ctx); err != nil {
			core.ControlOf(s).SessionLogger().Warn("store flush at shutdown", "err", err, "durable", p.Durable(), "head", s.Log().Head())
		}
	}
	if err := d.write(ctx); err != nil {
		core.ControlOf(s).SessionLogger().Warn("directory write at shutdown", "err", err)
	}
	if p != nil {
		d.retire()
		p.Stop()
	}
}

// remove removes a closed session from the store: the writer stops, the log is flushed (so no publish
// lands after the purge) and the log and entry are removed. In a cluster the entry says closed first, so no
// node's lookup between the purge and the entry's removal takes an emptied log for the session.
func (d *Link) Remove() {
	s := d.s
	d.stopWriter()
	ctx, cancel := context.WithTimeout(context.Background(), DirWriteTimeout)
	defer cancel()
	if p := d.persister(); p != nil {
		_ = p.Flush(ctx)
		d.retire()
		p.Stop()
	}
	if d.cfg.Clustered && s.Status() == store.StatusClosed { // not a create that failed
		if err := d.write(ctx); err != nil {
			core.ControlOf(s).SessionLogger().Warn("closed entry not written before the removal", "err", err)
		}
	}
	if err := d.st.Remove(ctx, s.ID); err != nil {
		core.ControlOf(s).SessionLogger().Warn("remove from the store", "err", err)
	}
}

// Changed tells the directory writer that the session's entry changed. It never blocks.
func (d *Link) Changed() {
	d.dirty.Store(true)
	d.changes.Add(1)
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// StandDown stops the link for good without writing anything: another node took the session over, so the
// store is no longer this node's to write. The directory writer stops first, then the write-behind.
func (d *Link) StandDown() {
	d.stopWriter()
	if p := d.persister(); p != nil {
		d.retire()
		p.Stop()
		d.setPersister(nil, 0) // a shutdown after this has nothing to flush
	}
}
