package durable

import (
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// ClosingFrames appends to the private session's log what closes it as lc says and returns those frames:
// for an open log (a turn, a pending request, or a live status), in a new epoch from head+1, the denials,
// the turn's end (finishTurn closes its tool calls) and the status; for a log a node loss closed, with
// lc.ReviveFrom, the detached status in its epoch; else none (a log already closed: the step ran before).
func (d *Link) ClosingFrames(lc core.LogClosing) []store.StoredFrame {
	head, appended := core.ControlOf(d.s).CloseOpenLog(lc)
	if !appended {
		return nil
	}
	return d.framesAfter(head)
}

// framesAfter is the private session's frames after seq head, for Fork.
func (d *Link) framesAfter(head uint64) []store.StoredFrame {
	s := d.s
	res, err := s.Log().Read(head, 1<<20, nil)
	if err != nil {
		return nil
	}
	out := make([]store.StoredFrame, 0, len(res.Entries))
	for _, en := range res.Entries {
		out = append(out, store.StoredFrame{Seq: en.Seq, Epoch: s.Epoch, Frame: en.Frame})
	}
	return out
}
