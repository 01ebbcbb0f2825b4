package acpws

import (
	"bytes"
	"testing"

	"github.com/acp-gateway/gateway/internal/eventlog"
)

// TestAsIsMemoAnswersBySeq: the memo answers a seq it holds without scanning, scans one it does not hold
// (another frame in the same slot) and answers as forwardsAsIs would.
func TestAsIsMemoAnswersBySeq(t *testing.T) {
	var m asIsMemos
	l := eventlog.NewLog(eventlog.LogLimits{})
	memo := m.acquire(l)
	if memo.slots.Load() != nil {
		t.Fatal("a memo with one attachment has slots")
	}
	other := m.acquire(l)
	if other != memo || memo.slots.Load() == nil {
		t.Fatal("a second attachment to the log does not share a memo with slots")
	}
	update := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan"}}}`)
	user := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"user_message_chunk"}}}`)
	if !memo.asIs(eventlog.Entry{Seq: 7, Frame: update}) {
		t.Fatal("plan update not as is")
	}
	// The memo's answer for seq 7 stands whatever bytes come with it: the seq names the frame.
	if !memo.asIs(eventlog.Entry{Seq: 7, Frame: user}) {
		t.Fatal("seq 7 was not answered from the memo")
	}
	// Seq 7+memoSlots lands in the same slot: it is scanned, not confused with 7.
	if memo.asIs(eventlog.Entry{Seq: 7 + memoSlots, Frame: user}) {
		t.Fatal("a user chunk in a reused slot was answered as is")
	}
	if memo.asIs(eventlog.Entry{Seq: 7, Frame: user}) {
		t.Fatal("seq 7 still answered after its slot was reused")
	}
	m.release(l, other)
	m.release(l, memo)
	if len(m.byLog) != 0 {
		t.Fatalf("memos left after every release: %d", len(m.byLog))
	}
}

// TestAsIsMemoReleasedWithTheSockets: sockets attached to one session share its memo while they forward a
// turn, and the memo goes when they close.
func TestAsIsMemoReleasedWithTheSockets(t *testing.T) {
	e := newEnv(t, Options{})
	a := e.dial("/acp")
	a.initialize()
	sid := a.newSession(e.dir)
	b := e.dial("/acp")
	b.initialize()
	b.mustResult("session/resume", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, nil)
	s, err := e.reg.Get(sid)
	if err != nil {
		t.Fatal(err)
	}
	memos := func() (n, refs int) {
		e.acp.memos.mu.Lock()
		defer e.acp.memos.mu.Unlock()
		for _, m := range e.acp.memos.byLog {
			refs += m.refs
		}
		return len(e.acp.memos.byLog), refs
	}
	if n, refs := memos(); n != 1 || refs != 2 {
		t.Fatalf("memos = %d with %d attachments, want 1 with 2", n, refs)
	}
	s.SessionUpdate([]byte(`{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"shared"}}}`))
	for _, cl := range []*client{a, b} {
		for m := cl.next(); !bytes.Contains(m.raw, []byte(`"shared"`)); m = cl.next() {
		}
	}
	a.c.CloseNow()
	b.c.CloseNow()
	waitFor(t, "the memo to be released", func() bool { n, _ := memos(); return n == 0 })
}
