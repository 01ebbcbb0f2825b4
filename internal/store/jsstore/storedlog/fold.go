package storedlog

import (
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/acp-gateway/gateway/internal/store"
)

// Folder applies the reader rule (docs/cluster.md §2) to a session's stored messages in stream order and emits
// the session's frames in log order: every seq at most once, in one epoch chain, with gaps where frames are
// missing for good. Feed, hydration and the takeover writer all read through it.
type Folder struct {
	maxPending int                           // Static after construction: bound of the out-of-order buffer.
	emit       func(store.StoredFrame) error // Static after construction.

	// All fields below are owned by the goroutine calling Message.
	started   bool
	last      uint64 // seq of the newest frame emitted (the end of a gap)
	epoch     string
	retired   map[string]bool
	pending   map[uint64]store.StoredFrame // seq > last+1 in the current epoch, waiting for the hole to fill
	asm       assembly                     // parts of one frame being reassembled
	anomalies uint64                       // new-epoch frames that do not fork at last+1; malformed messages
	stale     uint64                       // frames of retired epochs
}

// assembly collects the parts of one frame; parts are published consecutively, a republish starts again at 1.
type assembly struct {
	epoch string
	seq   uint64
	next  int // the part expected next; 0 when idle
	parts int
	data  []byte
}

// NewFolder returns a folder that hands emit each frame in log order, holding at most maxPending out of order.
func NewFolder(maxPending int, emit func(store.StoredFrame) error) *Folder {
	return &Folder{maxPending: max(1, maxPending), emit: emit, retired: map[string]bool{}, pending: map[uint64]store.StoredFrame{}}
}

// Message takes the next stored message of the session's subject; one the gateway did not write counts as
// an anomaly and is skipped.
func (f *Folder) Message(streamSeq uint64, h nats.Header, data []byte) error {
	r, err := Parse(streamSeq, h, data)
	if err != nil {
		f.anomalies++
		return nil
	}
	return f.fold(r)
}

// fold takes the next stored message. Parts are joined first; a whole frame or gap marker then goes through
// the rule: retired epoch → drop; seq <= last → duplicate; last+1 → emit and drain the buffer; beyond →
// buffer (a republish will fill the hole); a new epoch at last+1 → fork; any other new-epoch frame → anomaly.
// The log starts at seq 1, or, once settled, at the lowest frame held (the oldest ones were trimmed).
func (f *Folder) fold(r Record) error {
	if r.Parts > 1 {
		whole, ok := f.assemble(r)
		if !ok {
			return nil
		}
		r = whole
	}
	if f.retired[r.Epoch] {
		f.stale++
		return nil
	}
	fr := store.StoredFrame{Seq: r.Seq, Epoch: r.Epoch, Frame: r.Data, GapTo: r.GapTo}
	if !f.started {
		if f.epoch == "" {
			f.epoch = r.Epoch
		}
		if r.Epoch == f.epoch {
			// Until seq 1 shows up, frames wait: a republish may still bring the first ones.
			if fr.Seq == 1 {
				f.started = true
				return f.accept(fr)
			}
			return f.hold(fr)
		}
		if err := f.SettleStart(); err != nil {
			return err
		}
	}
	switch {
	case r.Epoch != f.epoch:
		if r.Seq != f.last+1 {
			f.anomalies++
			return nil
		}
		f.retired[f.epoch] = true
		f.epoch = r.Epoch
		clear(f.pending)
		return f.accept(fr)
	case end(fr) <= f.last:
		return nil // duplicate
	case fr.Seq <= f.last+1:
		if fr.Seq <= f.last { // a gap marker that overlaps what was emitted
			fr.Seq = f.last + 1
		}
		return f.accept(fr)
	default:
		return f.hold(fr)
	}
}

// hold buffers a frame that does not follow last; past maxPending the lowest hole is given up.
func (f *Folder) hold(fr store.StoredFrame) error {
	if _, dup := f.pending[fr.Seq]; !dup {
		f.pending[fr.Seq] = fr
	}
	if len(f.pending) > f.maxPending {
		return f.fillHole()
	}
	return nil
}

// SettleStart ends the wait for seq 1: the log starts at the lowest frame held (the stream was trimmed, or
// the writer's first publishes were lost). A live feed calls it once it has read what was stored.
func (f *Folder) SettleStart() error {
	if f.started || len(f.pending) == 0 {
		return nil
	}
	f.started = true
	f.last = slices.Min(mapKeys(f.pending)) - 1
	fr, _ := f.nextPending()
	return f.accept(fr)
}

// Settle ends a read that has consumed everything stored: a hole still open is final and becomes a gap.
func (f *Folder) Settle() error {
	if err := f.SettleStart(); err != nil {
		return err
	}
	for len(f.pending) > 0 {
		if err := f.fillHole(); err != nil {
			return err
		}
	}
	return nil
}

// accept emits fr (which starts at last+1 or is the first frame) and everything buffered that now follows.
func (f *Folder) accept(fr store.StoredFrame) error {
	for {
		if err := f.emit(fr); err != nil {
			return err
		}
		f.last = end(fr)
		var ok bool
		fr, ok = f.nextPending()
		if !ok {
			return nil
		}
	}
}

// nextPending removes and returns the buffered frame that continues at last+1, dropping buffered frames the
// emitted ones already cover (a gap marker may cover several).
func (f *Folder) nextPending() (store.StoredFrame, bool) {
	for seq, fr := range f.pending {
		if end(fr) <= f.last {
			delete(f.pending, seq)
		}
	}
	for seq, fr := range f.pending {
		if seq <= f.last+1 {
			delete(f.pending, seq)
			fr.Seq = f.last + 1
			return fr, true
		}
	}
	return store.StoredFrame{}, false
}

// fillHole gives up on the lowest hole: it becomes a gap marker up to the lowest buffered frame.
func (f *Folder) fillHole() error {
	if !f.started {
		return f.SettleStart()
	}
	if len(f.pending) == 0 {
		return nil
	}
	lowest := slices.Min(mapKeys(f.pending))
	return f.accept(store.StoredFrame{Seq: f.last + 1, Epoch: f.epoch, GapTo: lowest - 1})
}

// assemble adds one part; it returns the whole frame once its last part arrived in order.
func (f *Folder) assemble(r Record) (Record, bool) {
	a := &f.asm
	switch {
	case r.Part == 1:
		*a = assembly{epoch: r.Epoch, seq: r.Seq, next: 2, parts: r.Parts, data: append([]byte(nil), r.Data...)}
	case a.next == r.Part && a.epoch == r.Epoch && a.seq == r.Seq && a.parts == r.Parts:
		a.data = append(a.data, r.Data...)
		a.next++
	default:
		return Record{}, false // a duplicate part, or one whose predecessors were trimmed
	}
	if a.next <= a.parts {
		return Record{}, false
	}
	whole := r
	whole.Part, whole.Parts, whole.Data = 1, 1, a.data
	*a = assembly{}
	return whole, true
}

// end is the last seq a stored frame covers.
func end(fr store.StoredFrame) uint64 { return max(fr.Seq, fr.GapTo) }

func mapKeys(m map[uint64]store.StoredFrame) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
