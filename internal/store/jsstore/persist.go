package jsstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore/storedlog"
)

// readBatch is how many frames the writer takes from the ring per Read: a whole atomic batch.
const readBatch = atomicBatchMsgs

// Backoff after a failed publish: from backoffMin doubling to backoffMax (docs/cluster.md §1, the loop).
const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
)

// persister is the write-behind of one session's log: one goroutine (run) reads the ring after the last seq it
// published and publishes each frame in order, at most Inflight unacknowledged, and moves Durable() and the
// ring's pin as acks come back in order. With Options.Fence each publish expects the subject's last stream
// sequence to be the one this writer stored last (docs/cluster.md §5): once another node appended to the log
// (a takeover's fork), the store refuses this writer's next publish and the writer stops, fenced. The store
// checks one such publish per subject at a time, so a fenced writer has one in flight: an atomic batch of the
// frames one ring read holds (batch.go), or one message where the stream has no atomic batches.
type persister struct {
	st       *Store         // Static after construction.
	epoch    string         // Static after construction.
	subject  string         // Static after construction.
	log      *eventlog.Log  // Static after construction.
	pin      *atomic.Uint64 // Static after construction; the value is owned by run.
	partSize int            // Static after construction.

	durable    atomic.Uint64 // Written by run.
	oldestSent atomic.Int64  // Written by run: unix nanos of the oldest unacknowledged publish, 0 when none.
	errs       atomic.Uint64 // Written by run.
	gaps       atomic.Uint64 // Written by run.

	mu       sync.Mutex
	advanced chan struct{} // Guarded by mu; closed and replaced whenever durable moves.

	stopOnce sync.Once
	stop     chan struct{} // Closed by Stop.
	done     chan struct{} // Closed when run returns.
	fenced   chan struct{} // Closed by run before done when another writer appended to the subject.
	fenceErr error         // Written by run before fenced is closed: what the store holds last instead.
}

// inflight is one published message waiting for its ack.
type inflight struct {
	fut   jetstream.PubAckFuture
	seq   uint64 // durable reaches seq when this ack arrives, if last
	last  bool   // the frame's (or gap marker's) last message
	sent  time.Time
	bytes int
	sizes []int // an atomic batch's message sizes, in order; nil for one message of bytes
}

// Persist implements store.Store: it pins l's unacknowledged frames and starts the writer after seq from.
// sid is a session id the registry made; one that cannot name a subject is a programming error and panics.
func (s *Store) Persist(sid, epoch string, l *eventlog.Log, from uint64) store.Persister {
	if err := checkSID(sid); err != nil {
		panic(err)
	}
	p := &persister{
		st: s, epoch: epoch, subject: s.opts.logSubject(sid), log: l,
		partSize: max(1, int(s.nc.MaxPayload())-storedlog.PartOverhead),
		advanced: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}), fenced: make(chan struct{}),
	}
	p.pin = l.Pin(s.opts.MaxLag)
	p.pin.Store(from)
	p.durable.Store(from)
	go p.run(from)
	return p
}

func (p *persister) Durable() uint64 { return p.durable.Load() }

// Fenced is closed when the store refused a publish because another writer appended to the session's log.
func (p *persister) Fenced() <-chan struct{} { return p.fenced }

// Flush waits until every frame the log held at the call is acknowledged.
func (p *persister) Flush(ctx context.Context) error {
	target := p.log.Head()
	for {
		p.mu.Lock()
		advanced := p.advanced
		p.mu.Unlock()
		if p.durable.Load() >= target {
			return nil
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			select {
			case <-p.fenced:
				return p.fenceErr
			default:
				return errStopped
			}
		}
	}
}

var errStopped = errors.New("jsstore: persister stopped")

func (p *persister) Stats() store.PersistStats {
	durable := p.durable.Load()
	st := store.PersistStats{Errors: p.errs.Load(), Gaps: p.gaps.Load()}
	if head := p.log.Head(); head > durable {
		st.LagFrames = head - durable
	}
	if st.LagFrames > 0 {
		lag, err := p.log.LagBytes(durable) // not Read: a wake handed out costs the next append a channel
		switch {
		case errors.Is(err, eventlog.ErrTruncated):
			st.LagBytes = p.st.opts.MaxLag // the pin gave way: at least this much
		case err == nil:
			st.LagBytes = lag
		}
	}
	if sent := p.oldestSent.Load(); sent != 0 {
		st.OldestUnacked = time.Since(time.Unix(0, sent))
	}
	return st
}

// Stop ends the writer; frames not yet acknowledged stay unacknowledged (Flush first to store them).
func (p *persister) Stop() {
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
}

// run is the writer loop. It owns pos (the last seq published) and the queue of unacknowledged publishes.
func (p *persister) run(from uint64) {
	defer close(p.done)
	var w writer
	defer func() { w.lost.Stop() }()
	w = writer{p: p, pos: from, lost: time.NewTimer(time.Hour),
		budget: byteBudget{max: p.st.opts.LogMaxBytes, maxCount: p.st.opts.LogMaxFrames}}
	backoff := backoffMin
	for {
		err := w.step()
		switch {
		case errors.Is(err, errStopped):
			return
		case err != nil:
			p.errs.Add(1)
			if err := w.recover(err); err != nil {
				var fenced *fencedError
				if errors.As(err, &fenced) {
					p.fenceErr = err
					close(p.fenced)
				}
				return
			}
			if !p.sleep(backoff) {
				return
			}
			backoff = min(2*backoff, backoffMax)
		default:
			backoff = backoffMin
		}
	}
}

// sleep waits d unless Stop comes first.
func (p *persister) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.stop:
		return false
	}
}

// advance records that every frame up to seq is acknowledged.
func (p *persister) advance(seq uint64) {
	p.durable.Store(seq)
	p.pin.Store(seq)
	p.mu.Lock()
	close(p.advanced)
	p.advanced = make(chan struct{})
	p.mu.Unlock()
}

// writer is run's state. Owned by the run goroutine.
type writer struct {
	p      *persister
	pos    uint64           // the last seq published (or known stored)
	queue  []inflight       // unacknowledged publishes, oldest first
	buf    []eventlog.Entry // the last ring read, cleared; as large as the largest read
	budget byteBudget       // the stored messages that fit LogMaxBytes, when set
	// keptInFlight is how many publishes were unacknowledged at the last purge: it kept that many more
	// messages than the budget holds, which another purge drops once the queue is empty.
	keptInFlight int
	lost         *time.Timer // fires when the awaited ack is past ackWait
	// last is the stream sequence of the subject's last message as this writer knows it: what its next
	// publish expects. synced is false until it was read from the store (at the start, after a refusal).
	last   uint64
	synced bool
	// noBatches is set once the stream refused an atomic batch as disabled (an older gateway reconfigured it):
	// this writer publishes one message at a time from then on.
	noBatches bool
	// maxBatch is the most frames a batch holds, halved each time the server refused one as too large (its
	// max_batch_size is lower); 0 until then (atomicBatchMsgs). At 1 a batch is one plain publish.
	maxBatch int
}

// ackWait bounds the wait for one ack beyond the client's own publish timeout: after an in-process server
// restart, a future was seen to stay unresolved (no ack, no timeout, no disconnect error), which would stall
// the session's writer for good. Past it, the publish counts as failed and the writer republishes.
const ackWait = publishAckTimeout + time.Second

var errAckLost = errors.New("jsstore: no ack and no error for a publish")

// step publishes what the ring holds after pos, or waits for an ack, an append or Stop. An error means a
// publish failed: the caller drains the queue and republishes from Durable().
func (w *writer) step() error {
	p := w.p
	if p.st.opts.Fence && !w.synced {
		if err := w.resync(false); err != nil {
			return err
		}
	}
	res, err := p.log.Read(w.pos, readBatch, w.buf)
	if errors.Is(err, eventlog.ErrTruncated) {
		first, _ := p.log.Bounds()
		if err := w.publish(storedlog.GapMsg(p.subject, p.epoch, w.pos+1, first-1), first-1, true); err != nil {
			return err
		}
		p.gaps.Add(1)
		w.pos = first - 1
		return nil
	}
	w.buf = res.Entries[:0]
	publish := w.publishEach
	if w.batching() {
		publish = w.publishBatches
	}
	if err := publish(res.Entries); err != nil {
		return err
	}
	clear(res.Entries) // the ring's frames are not held past this step
	if len(res.Entries) > 0 {
		return nil
	}
	var wake <-chan struct{}
	if !res.Closed {
		wake = res.Wake
	}
	if len(w.queue) == 0 {
		select {
		case <-wake:
			return nil
		case <-p.stop:
			return errStopped
		}
	}
	return w.awaitOldest(wake)
}

// publishEach publishes entries one message at a time.
func (w *writer) publishEach(entries []eventlog.Entry) error {
	for _, e := range entries {
		if err := w.publishFrame(e); err != nil {
			return err
		}
	}
	return nil
}

// publishFrame publishes one frame's messages one at a time and moves pos past it.
func (w *writer) publishFrame(e eventlog.Entry) error {
	msgs := storedlog.FrameMsgs(w.p.subject, w.p.epoch, e.Seq, e.Frame, w.p.partSize)
	for i, m := range msgs {
		if err := w.publish(m, e.Seq, i == len(msgs)-1); err != nil {
			return err
		}
	}
	w.pos = e.Seq
	return nil
}

// publish sends one message, first waiting while Inflight publishes are unacknowledged. Fenced, it expects
// the subject's last sequence, which is known once the publish before it is acknowledged.
func (w *writer) publish(m *nats.Msg, seq uint64, last bool) error {
	limit := w.p.st.opts.Inflight
	var opts []jetstream.PublishOpt
	if w.p.st.opts.Fence {
		limit = 1
	}
	for len(w.queue) >= limit {
		if err := w.awaitOldest(nil); err != nil {
			return err
		}
	}
	if w.p.st.opts.Fence {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(w.last))
	}
	fut, err := w.p.st.js.PublishMsgAsync(m, opts...)
	if err != nil {
		return err
	}
	now := time.Now()
	if len(w.queue) == 0 {
		w.p.oldestSent.Store(now.UnixNano())
	}
	w.queue = append(w.queue, inflight{fut: fut, seq: seq, last: last, sent: now, bytes: len(m.Data)})
	return nil
}

// awaitOldest waits for the oldest publish's ack (or for wake, or Stop) and applies it.
func (w *writer) awaitOldest(wake <-chan struct{}) error {
	p := w.p
	head := w.queue[0]
	w.lost.Reset(time.Until(head.sent.Add(ackWait)))
	select {
	case ack := <-head.fut.Ok():
		w.stored(ack)
	case err := <-head.fut.Err():
		w.popHead()
		return &headFailedError{err: err, batchMsgs: len(head.sizes)}
	case <-w.lost.C:
		w.popHead()
		return &headFailedError{err: errAckLost}
	case <-wake:
		return nil
	case <-p.stop:
		return errStopped
	}
	w.popHead()
	w.acked(head)
	return nil
}

// popHead removes the oldest publish from the queue.
func (w *writer) popHead() {
	w.queue[0] = inflight{}
	w.queue = w.queue[1:]
	if len(w.queue) == 0 {
		w.queue = w.queue[:0:0]
		w.p.oldestSent.Store(0)
	} else {
		w.p.oldestSent.Store(w.queue[0].sent.UnixNano())
	}
}

// headFailedError is a failure of the oldest publish, already taken off the queue: its future delivered its
// only error, so nothing waits on it again.
type headFailedError struct {
	err       error
	batchMsgs int // the messages of the failed atomic batch; 0 for a single publish
}

func (e *headFailedError) Error() string { return e.err.Error() }
func (e *headFailedError) Unwrap() error { return e.err }

// recover follows a failed step: it waits out the publishes still in flight and rewinds to Durable(), so the
// next step republishes what was not acknowledged. A publish the store refused for its expected sequence
// reads the subject's last message: another writer's is a *fencedError, and the writer stops.
func (w *writer) recover(err error) error {
	var headFailed *headFailedError
	if err := w.drain(!errors.As(err, &headFailed)); err != nil {
		return err
	}
	w.pos = w.p.durable.Load()
	if isBatchDisabled(err) {
		w.noBatches = true
	}
	if isBatchTooLarge(err) {
		refused := w.batchMsgs()
		if headFailed != nil && headFailed.batchMsgs > 0 {
			refused = headFailed.batchMsgs // a batch cut short by atomicBatchBytes or the frames at hand
		}
		w.maxBatch = max(1, refused/2)
	}
	if w.p.st.opts.Fence && (isWrongLastSequence(err) || isBatchDuplicate(err)) {
		w.synced = false
		var fenced *fencedError
		if err := w.resync(true); errors.As(err, &fenced) {
			return err
		}
		w.pos = w.p.durable.Load()
	}
	return nil
}

// stored takes an ack's stream sequence as the subject's last, unless the ack is a duplicate's: the store
// kept an earlier message with the same msg-id, which names no new last message (a refusal resyncs).
func (w *writer) stored(ack *jetstream.PubAck) {
	if ack != nil && !ack.Duplicate {
		w.last = ack.Sequence
	}
}

// resync reads the subject's last message from the stream's leader and expects it from now on. At the start
// any message is the log this writer continues (its session was just claimed). After a refusal (afterRefusal),
// a last message of another epoch, or none once this writer had stored one (the log was removed), means
// another node owns the log now: a *fencedError. One of this epoch is this writer's own: everything up to it
// is stored (a publish whose ack was lost), so Durable() moves there and it is not published again.
func (w *writer) resync(afterRefusal bool) error {
	p := w.p
	ctx, cancel := context.WithTimeout(context.Background(), publishAckTimeout)
	defer cancel()
	m, err := leaderLast(ctx, p.st.nc, p.st.opts.logStream(), p.subject)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		if afterRefusal && w.last > 0 {
			return &fencedError{}
		}
		m = lastMsg{}
	case err != nil:
		return fmt.Errorf("jsstore: last message of %s: %w", p.subject, err)
	case afterRefusal:
		r, perr := storedlog.Parse(m.seq, m.header, nil)
		if perr != nil || r.Epoch != p.epoch {
			return &fencedError{other: m.header.Get(jetstream.MsgIDHeader), streamSeq: m.seq}
		}
		if end := max(r.Seq, r.GapTo); r.Part == r.Parts && end > p.durable.Load() {
			p.advance(end)
		}
	}
	w.last, w.synced = m.seq, true
	return nil
}

// fencedError is a publish the store refused because another writer appended to the session's log, or
// removed it.
type fencedError struct {
	other     string // the msg-id of the subject's last message (the other writer's); "" when none is left
	streamSeq uint64
}

func (e *fencedError) Error() string {
	if e.streamSeq == 0 {
		return "jsstore: the log was removed under this writer"
	}
	return fmt.Sprintf("jsstore: the log was appended to by another writer (last message %q at stream seq %d)", e.other, e.streamSeq)
}

func (e *fencedError) Unwrap() error { return store.ErrFenced }

// acked applies one acknowledged publish: the byte budget first, then Durable() if it ends a frame, so a
// Flush that returns has seen the purge too.
func (w *writer) acked(in inflight) {
	if w.p.st.opts.LogMaxBytes > 0 {
		if in.sizes == nil {
			w.budget.add(in.bytes)
		}
		for _, size := range in.sizes {
			w.budget.add(size)
		}
		if w.budget.purgeDue() || (w.keptInFlight > 0 && len(w.queue) == 0) {
			w.purge()
		}
	}
	if in.last {
		w.p.advance(in.seq)
	}
}

// purge drops the subject's messages that fall out of the byte budget (JetStream has no per-subject byte
// limit): it keeps the newest messages the budget holds, plus as many as are still unacknowledged (some of
// them may not be stored yet, so older ones stand in for them until the next purge).
func (w *writer) purge() {
	ctx, cancel := context.WithTimeout(context.Background(), purgeTimeout)
	defer cancel()
	keep := uint64(max(1, w.budget.count()+len(w.queue))) // the last message stays: the next publish expects it
	if err := w.p.st.stream.Purge(ctx, jetstream.WithPurgeSubject(w.p.subject), jetstream.WithPurgeKeep(keep)); err != nil {
		w.p.errs.Add(1)
		return
	}
	w.budget.purged()
	w.keptInFlight = len(w.queue)
}

const purgeTimeout = 5 * time.Second

// drain waits for every outstanding publish after a failure. With countAcks, acks that still arrive in order
// count; an earlier publish that failed leaves it false, since nothing after a gap may.
func (w *writer) drain(countAcks bool) error {
	p := w.p
	failed := !countAcks
	for _, in := range w.queue {
		w.lost.Reset(time.Until(in.sent.Add(ackWait)))
		select {
		case ack := <-in.fut.Ok():
			w.stored(ack)
			if !failed {
				w.acked(in)
			}
		case <-in.fut.Err():
			failed = true
		case <-w.lost.C:
			failed = true
		case <-p.stop:
			return errStopped
		}
	}
	w.queue = w.queue[:0:0]
	p.oldestSent.Store(0)
	return nil
}
