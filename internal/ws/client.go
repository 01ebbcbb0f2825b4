package ws

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/coder/websocket"
)

// client is one WebSocket connection to one session.
type client struct {
	// Static after construction.
	h        *Handler
	c        *websocket.Conn
	s        *sessions.Session
	epoch    string // the epoch the client resumes from ("" = none given)
	after    uint64
	hasAfter bool

	replies chan []byte // reader → writer: direct JSON-RPC replies to this client (not logged)

	// Owned by the writer goroutine.
	cursor      uint64
	replayUntil uint64 // head of the log at connect: frames up to it are replay, not lag
	warned      bool   // a slow_client warning is outstanding
}

func newClient(h *Handler, c *websocket.Conn, s *sessions.Session, epoch string, after uint64, hasAfter bool) *client {
	return &client{h: h, c: c, s: s, epoch: epoch, after: after, hasAfter: hasAfter, replies: make(chan []byte, 16)}
}

// closeErr carries the close code the writer decided on.
type closeErr struct {
	code   websocket.StatusCode
	reason string
}

func (e *closeErr) Error() string { return e.reason }

// run starts the reader, runs the writer on this goroutine, and returns when both have ended.
func (cl *client) run(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	readDone := make(chan error, 1)
	go func() { readDone <- cl.readLoop(ctx) }()

	err := cl.writeLoop(ctx, readDone)
	var ce *closeErr
	switch {
	case errors.As(err, &ce):
		cl.c.Close(ce.code, ce.reason)
	default:
		cl.c.CloseNow()
	}
	cancel()
	<-readDone
}

// writeLoop is the connection's only writer of data frames.
func (cl *client) writeLoop(ctx context.Context, readDone <-chan error) error {
	log := cl.s.Log()
	first, head := log.Bounds()
	cl.replayUntil = head
	reason := ""
	switch {
	case cl.hasAfter && cl.epoch != "" && cl.epoch != cl.s.Epoch:
		reason = "epoch_changed"
	case cl.hasAfter && cl.after > head:
		reason = "invalid_cursor"
	case cl.after+1 < first:
		reason = "log_truncated"
	}
	replayed := false
	if reason != "" {
		// Nothing partial: tell the client to reload the snapshot (`GET /v1/sessions/{id}`, which reflects
		// at least head) and go on live from head; the client ignores frames with seq <= its snapshot's.
		if err := cl.writeNote(ctx, "_gateway/resync_required", map[string]any{
			"reason": reason, "earliestSeq": first, "headSeq": head, "epoch": cl.s.Epoch,
		}); err != nil {
			return err
		}
		cl.cursor, replayed = head, true
	} else {
		cl.cursor = cl.after
		if cl.cursor >= cl.replayUntil {
			if err := cl.finishReplay(ctx); err != nil {
				return err
			}
			replayed = true
		}
	}
	ping := time.NewTicker(cl.h.opts.PingInterval)
	defer ping.Stop()
	var buf []sessions.Entry
	for {
		res, err := log.Read(cl.cursor, 256, buf)
		if errors.Is(err, sessions.ErrTruncated) {
			// Trimmed past our cursor while we were behind: nothing partial, tell the client to resync.
			_ = cl.writeNote(ctx, "_gateway/resync_required", map[string]any{"reason": "log_truncated", "earliestSeq": first})
			return &closeErr{CodeSlowClient, reasonTruncated}
		}
		buf = res.Entries
		for _, e := range res.Entries {
			if err := cl.write(ctx, e.Frame); err != nil {
				return err
			}
			cl.cursor = e.Seq
			if !replayed && cl.cursor >= cl.replayUntil {
				if err := cl.finishReplay(ctx); err != nil {
					return err
				}
				replayed = true
			}
		}
		if err := cl.checkLag(ctx, res); err != nil {
			return err
		}
		if len(res.Entries) > 0 {
			continue
		}
		if res.Closed {
			return &closeErr{CodeSessionClosed, reasonClosed}
		}
		select {
		case <-res.Wake:
		case b := <-cl.replies:
			if err := cl.write(ctx, b); err != nil {
				return err
			}
		case <-ping.C:
			go func() {
				pctx, cancel := context.WithTimeout(ctx, cl.h.opts.WriteTimeout)
				defer cancel()
				if err := cl.c.Ping(pctx); err != nil {
					cl.c.CloseNow() // missed pong: the reader fails and the writer follows
				}
			}()
		case err := <-readDone:
			return readErrToClose(err)
		case <-cl.h.shutdown:
			return &closeErr{CodeGoingAway, reasonShutdown}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finishReplay re-sends pending permission requests the replay did not include (they were logged at or
// before the client's cursor), then marks the end of the replay.
func (cl *client) finishReplay(ctx context.Context) error {
	for _, e := range cl.s.PendingFrames(cl.after) {
		if err := cl.write(ctx, e.Frame); err != nil {
			return err
		}
	}
	return cl.writeNote(ctx, "_gateway/replay_complete", map[string]any{"lastSeq": cl.cursor, "epoch": cl.s.Epoch})
}

// checkLag warns a client at 75 % of its queue bound and evicts it past the bound. Replay does not count:
// only what was appended since the client connected.
func (cl *client) checkLag(ctx context.Context, res sessions.ReadResult) error {
	base := max(cl.cursor, cl.replayUntil)
	if res.Head <= base {
		if cl.warned {
			cl.warned = false
		}
		return nil
	}
	frames := int(res.Head - base)
	bytes := res.LagBytes
	if cl.cursor < cl.replayUntil {
		bytes = 0 // still replaying: byte lag includes history
	}
	o := cl.h.opts
	if frames > o.QueueFrames || bytes > o.QueueBytes {
		return &closeErr{CodeSlowClient, reasonSlow}
	}
	if !cl.warned && (frames*4 >= o.QueueFrames*3 || bytes*4 >= o.QueueBytes*3) {
		cl.warned = true
		return cl.writeNote(ctx, "_gateway/slow_client", map[string]any{"lagFrames": frames, "lagBytes": bytes, "maxFrames": o.QueueFrames, "maxBytes": o.QueueBytes})
	}
	return nil
}

func (cl *client) write(ctx context.Context, frame []byte) error {
	wctx, cancel := context.WithTimeout(ctx, cl.h.opts.WriteTimeout)
	defer cancel()
	return cl.c.Write(wctx, websocket.MessageText, frame)
}

// writeNote writes a gateway notification that is not part of the log (no seq).
func (cl *client) writeNote(ctx context.Context, method string, params any) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	return cl.write(ctx, b)
}

func readErrToClose(err error) error {
	var ce *closeErr
	if errors.As(err, &ce) {
		return ce
	}
	if websocket.CloseStatus(err) != -1 {
		return err // the peer closed; nothing more to say
	}
	return err
}
