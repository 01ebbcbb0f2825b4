package ws

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/coder/websocket"
)

// client is one WebSocket connection to one session. It is the session's Sink: Follow drives it from the
// connection's writer goroutine.
type client struct {
	// Static after construction.
	h     *Handler
	c     *websocket.Conn
	s     *sessions.Session
	start sessions.Start

	replies chan []byte // reader → writer: direct JSON-RPC replies to this client (not logged)

	// Owned by the writer goroutine (set in run before Follow starts).
	ctx  context.Context
	ping *time.Ticker
	// The write deadline context is shared by consecutive frames and renewed once less than half of
	// WriteTimeout is left: every write stays bounded by WriteTimeout/2..WriteTimeout without paying for a
	// context and a timer per frame.
	wctx      context.Context
	wcancel   context.CancelFunc
	wdeadline time.Time

	readDone chan struct{} // closed by the reader when it ends; readErr is set before
	readErr  error
}

func newClient(h *Handler, c *websocket.Conn, s *sessions.Session, start sessions.Start) *client {
	return &client{h: h, c: c, s: s, start: start, replies: make(chan []byte, 16), readDone: make(chan struct{})}
}

// closeErr carries the close code the connection ends with.
type closeErr struct {
	code   websocket.StatusCode
	reason string
}

func (e *closeErr) Error() string { return e.reason }

// run starts the reader, runs the writer on this goroutine, and returns when both have ended.
func (cl *client) run(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	go func() {
		cl.readErr = cl.readLoop(ctx)
		close(cl.readDone)
	}()

	cl.ctx = ctx
	cl.ping = time.NewTicker(cl.h.opts.PingInterval)
	err := cl.s.Follow(cl.start, cl, sessions.FollowLimits{Frames: cl.h.opts.QueueFrames, Bytes: cl.h.opts.QueueBytes})
	cl.ping.Stop()
	if cl.wcancel != nil {
		cl.wcancel()
	}
	var ce *closeErr
	switch {
	case errors.As(err, &ce):
		cl.c.Close(ce.code, ce.reason)
	case errors.Is(err, sessions.ErrSessionClosed) && cl.draining():
		cl.c.Close(CodeGoingAway, reasonShutdown) // the session closed because the gateway is going away
	case errors.Is(err, sessions.ErrSessionClosed):
		cl.c.Close(CodeSessionClosed, reasonClosed)
	case errors.Is(err, sessions.ErrEvicted):
		cl.h.opts.Metrics.Evicted("ws")
		cl.c.Close(CodeSlowClient, reasonSlow)
	default:
		cl.c.CloseNow()
	}
	cancel()
	<-cl.readDone
}

func (cl *client) draining() bool {
	select {
	case <-cl.h.shutdown:
		return true
	default:
		return false
	}
}

// Frame implements sessions.Sink.
func (cl *client) Frame(_ uint64, frame []byte) error {
	cl.h.opts.Metrics.FrameOut("ws", len(frame))
	return cl.write(frame)
}

// Note implements sessions.Sink: a gateway notification that is not part of the log (no seq).
func (cl *client) Note(method string, params any) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	return cl.write(b)
}

// Wait implements sessions.Sink: while caught up, the writer also sends replies and pings.
func (cl *client) Wait(wake <-chan struct{}) error {
	for {
		select {
		case <-wake:
			return nil
		case b := <-cl.replies:
			if err := cl.write(b); err != nil {
				return err
			}
		case <-cl.ping.C:
			go func() {
				pctx, cancel := context.WithTimeout(cl.ctx, cl.h.opts.WriteTimeout)
				defer cancel()
				if err := cl.c.Ping(pctx); err != nil {
					cl.c.CloseNow() // missed pong: the reader fails and the writer follows
				}
			}()
		case <-cl.readDone:
			var ce *closeErr
			if errors.As(cl.readErr, &ce) {
				return ce
			}
			if cl.readErr == nil {
				return errors.New("reader ended")
			}
			return cl.readErr
		case <-cl.h.shutdown:
			return &closeErr{CodeGoingAway, reasonShutdown}
		case <-cl.ctx.Done():
			return cl.ctx.Err()
		}
	}
}

func (cl *client) write(frame []byte) error {
	now := time.Now()
	if cl.wctx == nil || cl.wdeadline.Sub(now) < cl.h.opts.WriteTimeout/2 {
		if cl.wcancel != nil {
			cl.wcancel()
		}
		cl.wdeadline = now.Add(cl.h.opts.WriteTimeout)
		cl.wctx, cl.wcancel = context.WithDeadline(cl.ctx, cl.wdeadline)
	}
	return cl.c.Write(cl.wctx, websocket.MessageText, frame)
}
