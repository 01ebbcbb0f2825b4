package acpws

import (
	"context"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// errSlow closes a socket that lags too far behind one of its logs (4001).
var errSlow = &closeErr{Code: codeSlowClient, Reason: reasonSlow}

// attachment is the writer's view of one attached session. Owned by the writer.
type attachment struct {
	s           *sessions.Session
	replayUntil uint64              // frames up to this seq are history: no permission requests, no lag count
	cur         *eventlog.Cursor    // position and lag in s's log
	wake        <-chan struct{}     // from the last read; closed when the log has more
	watch       <-chan struct{}     // the wake a watcher goroutine waits on (see writer.watch)
	gone        chan struct{}       // closed when the attachment is replaced or ends: its watcher ends
	done        bool                // the log is closed and fully read
	asked       map[string]struct{} // permission ids sent to the client and not yet resolved
}

// writer is the connection's only writer of data frames. It multiplexes the logs of every attached session
// onto the one socket: each log is read through its own cursor, and a log with nothing to read has one
// watcher goroutine that wakes the writer (woke) when it grows, so the writer waits on a fixed set of
// channels however many sessions are attached.
type writer struct {
	c    *conn
	out  *frameout.Writer       // Owned by the writer.
	atts map[string]*attachment // Owned by the writer.
	woke chan struct{}          // watchers → writer: some log has more; capacity 1
}

// attach starts forwarding s's log after seq from; frames up to replayUntil are history. Re-attaching
// replaces the cursor.
func (w *writer) attach(s *sessions.Session, from, replayUntil uint64) *attachment {
	o := w.c.h.opts
	a := &attachment{
		s:           s,
		replayUntil: replayUntil,
		cur:         s.NewCursor(from, replayUntil, eventlog.FollowLimits{Frames: o.QueueFrames, Bytes: o.QueueBytes}),
		gone:        make(chan struct{}),
		asked:       map[string]struct{}{},
	}
	if old := w.atts[s.ID]; old != nil {
		w.end(old)
		if old.s == s {
			a.asked = old.asked // still asked: a re-load re-sends only what is pending
		}
	}
	w.atts[s.ID] = a
	return a
}

func (w *writer) detach(a *attachment) {
	if w.atts[a.s.ID] == a {
		delete(w.atts, a.s.ID)
		w.end(a)
	}
	w.c.unsubscribe(a.s)
	if a.done {
		// The session closed and its last frames are written: its own stream (Streamable HTTP) ends once the
		// answers still due on it are queued.
		w.c.t.EndClosedStream(a.s.ID)
	}
}

// end is the end of an attachment that was replaced, detached, or whose socket ends: its watcher ends.
func (w *writer) end(a *attachment) {
	close(a.gone)
}

// endAll ends every attachment once the writer has stopped.
func (w *writer) endAll() {
	for id, a := range w.atts {
		delete(w.atts, id)
		w.end(a)
	}
}

func (w *writer) loop(ctx context.Context, readDone <-chan struct{}, readErr *error) error {
	c := w.c
	ping := time.NewTicker(c.h.opts.PingInterval)
	defer ping.Stop()
	for {
		busy := false
		for _, a := range w.atts {
			n, err := w.pump(a, 0)
			if err != nil {
				return err
			}
			if n > 0 {
				busy = true
			}
			if a.done {
				w.detach(a)
			}
		}
		if busy {
			// Interleave queued responses with a long log so neither starves, and notice an ending socket.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-c.revoked:
				return &closeErr{Code: codeRevoked, Reason: principal.EndReason(c.ctx)}
			case <-readDone:
				return readErrToClose(*readErr)
			case <-c.h.shutdown:
				return w.goingAway(ctx)
			case o := <-c.out:
				if err := o(w); err != nil {
					return err
				}
			default:
			}
			continue
		}
		for _, a := range w.atts {
			w.watch(a)
		}
		if err := w.out.Flush(); err != nil { // caught up: what is held goes out before waiting
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.revoked:
			return &closeErr{Code: codeRevoked, Reason: principal.EndReason(c.ctx)}
		case <-readDone:
			return readErrToClose(*readErr)
		case <-c.h.shutdown:
			return w.goingAway(ctx)
		case <-ping.C:
			c.work.Add(1)
			go func() {
				defer c.work.Done()
				pctx, cancel := context.WithTimeout(ctx, min(c.h.opts.WriteTimeout, c.h.opts.PingInterval))
				defer cancel()
				if err := c.t.Ping(pctx); err != nil && ctx.Err() == nil {
					c.t.Abort() // missed pong: the reader fails and the writer follows
				}
			}()
		case o := <-c.out:
			if err := o(w); err != nil {
				return err
			}
		case <-w.woke:
			// A log grew: the next round pumps it.
		}
	}
}

// goingAway is the writer's last act at shutdown, which closes the sessions before the sockets: it forwards
// what the attached logs still hold (turns ended, permissions withdrawn) and the answers to this socket's
// prompts, bounded by the write timeout, and then ends the socket with 1001.
func (w *writer) goingAway(ctx context.Context) error {
	deadline := time.NewTimer(w.c.h.opts.WriteTimeout)
	defer deadline.Stop()
	for {
		for _, a := range w.atts {
			for {
				n, err := w.pump(a, 0)
				if err != nil {
					return err
				}
				if n == 0 {
					break
				}
			}
			if a.done {
				w.detach(a)
			}
		}
		if !w.c.hasOwnTurns() {
			return &closeErr{Code: codeGoingAway, Reason: reasonShutdown}
		}
		if err := w.out.Flush(); err != nil {
			return err
		}
		select {
		case o := <-w.c.out:
			if err := o(w); err != nil {
				return err
			}
		case <-deadline.C:
			return &closeErr{Code: codeGoingAway, Reason: reasonShutdown}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// watch makes sure a goroutine wakes the writer when a's log grows past the writer's last read. One
// watcher per wake channel: it ends when the channel is closed, the attachment ends, or the socket does.
func (w *writer) watch(a *attachment) {
	if a.wake == nil || a.watch == a.wake {
		return
	}
	a.watch = a.wake
	wake, gone, ctx := a.wake, a.gone, w.c.ctx
	w.c.work.Add(1)
	go func() {
		defer w.c.work.Done()
		select {
		case <-wake:
			select {
			case w.woke <- struct{}{}:
			default: // the writer is already woken
			}
		case <-gone:
		case <-ctx.Done():
		}
	}()
}

// pump reads the next batch of a's log (up to seq limit when limit > 0) and forwards what this socket
// forwards. It returns how many frames it handled.
func (w *writer) pump(a *attachment, limit uint64) (int, error) {
	if a.done {
		return 0, nil
	}
	b, err := a.cur.Next()
	if errors.Is(err, eventlog.ErrTruncated) && a.cur.Replaying() {
		// Replaying history the log no longer holds entirely: start at its oldest frame.
		first, _ := a.s.Log().Bounds()
		a.cur.Advance(first - 1)
		b, err = a.cur.Next()
	}
	switch {
	case errors.Is(err, eventlog.ErrTruncated):
		return 0, &closeErr{Code: codeSlowClient, Reason: reasonTruncated}
	case errors.Is(err, eventlog.ErrEvicted):
		return 0, errSlow
	case err != nil:
		return 0, err
	}
	// b.Warn is not sent: raw ACP has no `_gateway/slow_client` notification.
	a.wake = b.Wake
	n := 0
	for _, e := range b.Entries {
		if limit > 0 && e.Seq > limit {
			break
		}
		if a.cur.Check(e) != nil {
			return n, errSlow
		}
		if err := w.forward(a, e); err != nil {
			return n, err
		}
		a.cur.Advance(e.Seq)
		n++
	}
	if len(b.Entries) == 0 && b.Closed {
		a.done = true
	}
	return n, nil
}

// flush forwards a's log up to seq upTo.
func (w *writer) flush(a *attachment, upTo uint64) error {
	for a.cur.Pos() < upTo && !a.done {
		n, err := w.pump(a, upTo)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}

// write sends a response under the write watchdog: it goes where its request asked (the transport knows).
func (w *writer) write(frame []byte) error { return w.writeFor("", frame) }

// writeFor sends one frame of session's (a log frame, a request to the client) under the write watchdog.
func (w *writer) writeFor(session string, frame []byte) error {
	return w.out.Write(len(frame), func() error { return w.c.t.Write(session, frame) })
}
