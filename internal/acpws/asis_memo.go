package acpws

import (
	"sync"
	"sync/atomic"

	"github.com/acp-gateway/gateway/internal/eventlog"
)

// asIsMemos shares forwardsAsIs's answers among the sockets of one Handler that forward the same log: the
// first writer to reach a frame decides, the others read its answer. With ten sockets on a session, each
// frame is scanned once instead of ten times, as `/ws` clients share the log's bytes. Sockets never wait
// for each other: a writer that finds no answer scans the frame itself.
type asIsMemos struct {
	mu    sync.Mutex
	byLog map[*eventlog.Log]*asIsMemo // Guarded by mu; the logs some socket attached to.
}

// asIsMemo is one log's answers. Its slots are made when a second socket attaches: a socket alone has
// nobody to share with.
type asIsMemo struct {
	refs  int                                      // Guarded by asIsMemos.mu: attachments using it.
	slots atomic.Pointer[[memoSlots]atomic.Uint64] // seq<<1 | asIs; 0 when empty. Written once, under asIsMemos.mu.
}

// memoSlots is how many recent frames a memo answers for, by seq modulo: more than the 256 frames a writer
// reads at once, so writers a batch apart still share. A power of two.
const memoSlots = 512

// acquire returns l's memo for one more attachment; release it when the attachment ends.
func (m *asIsMemos) acquire(l *eventlog.Log) *asIsMemo {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byLog == nil {
		m.byLog = map[*eventlog.Log]*asIsMemo{}
	}
	memo := m.byLog[l]
	if memo == nil {
		memo = &asIsMemo{}
		m.byLog[l] = memo
	}
	if memo.refs++; memo.refs == 2 && memo.slots.Load() == nil {
		memo.slots.Store(new([memoSlots]atomic.Uint64))
	}
	return memo
}

func (m *asIsMemos) release(l *eventlog.Log, memo *asIsMemo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if memo.refs--; memo.refs == 0 && m.byLog[l] == memo {
		delete(m.byLog, l)
	}
}

// asIs is forwardsAsIs(e.Frame), answered from the memo when another socket already scanned the frame. A
// log never gives one seq to two frames, so the seq names the frame.
func (memo *asIsMemo) asIs(e eventlog.Entry) bool {
	slots := memo.slots.Load()
	if slots == nil {
		return forwardsAsIs(e.Frame)
	}
	slot := &slots[e.Seq&(memoSlots-1)]
	if v := slot.Load(); v>>1 == e.Seq {
		return v&1 == 1
	}
	asIs := forwardsAsIs(e.Frame)
	v := e.Seq << 1
	if asIs {
		v |= 1
	}
	slot.Store(v)
	return asIs
}
