package ws

import (
	"context"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/coder/websocket"
)

// client is one WebSocket connection to one session. It is the session's Sink: Follow drives it from the
// connection's writer goroutine.
type client struct {
	// Static after construction.
	h     *Handler
	c     *websocket.Conn
	held  *frameout.HeldConn // under c: frames ready together leave in one write (frameout.Writer.Batch)
	s     *sessions.Session
	sub   *sessions.Subscriber // s's subscription: presence, and the end of a share
	start sessions.Start
	who   principal.Principal // who opened the socket: its permission answers are theirs
	// revoked is closed when who's credentials are revoked or expire: the socket closes with 1008 and why.
	revoked    <-chan struct{}
	revokedWhy string

	replies chan []byte // reader → writer: direct JSON-RPC replies to this client (not logged)

	// Owned by the writer goroutine (set in run before Follow starts).
	ctx  context.Context
	ping *time.Ticker
	out  *frameout.Writer

	readDone chan struct{} // closed by the reader when it ends; readErr is set before
	readErr  error
}

func newClient(ctx context.Context, h *Handler, c *websocket.Conn, held *frameout.HeldConn, sub *sessions.Subscriber, start sessions.Start) *client {
	return &client{h: h, c: c, held: held, s: sub.Session(), sub: sub, start: start, who: principal.From(ctx), revoked: principal.Revoked(ctx), revokedWhy: principal.EndReason(ctx), replies: make(chan []byte, 16), readDone: make(chan struct{})}
}

// closeErr carries the close code the connection ends with.
type closeErr = frameout.CloseError

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
	cl.out = frameout.Start(ctx, cl.h.opts.WriteTimeout, cl.h.face, func() { cl.c.CloseNow() }).Batch(cl.held)
	err := cl.sub.Follow(cl.start, cl, eventlog.FollowLimits{Frames: cl.h.opts.QueueFrames, Bytes: cl.h.opts.QueueBytes})
	_ = cl.out.Flush() // what the stream ended with goes out before the close frame (a failed flush fails the close too)
	cl.ping.Stop()
	cl.out.Stop()
	var ce *closeErr
	switch {
	case errors.As(err, &ce):
		cl.c.Close(ce.Code, ce.Reason)
	case errors.Is(err, sessionerr.ErrLost):
		cl.c.Close(CodeNotFound, reasonNotFound) // a share ended: to its principal the session does not exist
	case errors.Is(err, sessionerr.ErrStoodDown):
		cl.c.Close(CodeMoved, reasonMoved) // another node took the session over: reconnect, the stored log serves it
	case errors.Is(err, sessionerr.ErrShutdown), errors.Is(err, sessionerr.ErrSessionClosed) && cl.draining():
		cl.c.Close(CodeGoingAway, reasonShutdown) // the session closed because the gateway is going away
	case errors.Is(err, sessionerr.ErrSessionClosed):
		cl.c.Close(CodeSessionClosed, reasonClosed)
	case errors.Is(err, eventlog.ErrEvicted):
		cl.h.face.Evicted()
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
func (cl *client) Frame(_ uint64, frame []byte) error { return cl.write(frame) }

// Note implements sessions.Sink: a gateway notification that is not part of the log (no seq).
func (cl *client) Note(method string, params any) error {
	b, err := frameout.Notification(method, params)
	if err != nil {
		return err
	}
	return cl.write(b)
}

// Wait implements sessions.Sink: while caught up, the writer also sends replies and pings. The frames held
// since the last wait go out first: nothing held waits for more.
func (cl *client) Wait(wake <-chan struct{}) error {
	for {
		if err := cl.out.Flush(); err != nil {
			return err
		}
		select {
		case <-wake:
			return nil
		case b := <-cl.replies:
			if err := cl.write(b); err != nil {
				return err
			}
		case <-cl.ping.C:
			go func() {
				pctx, cancel := context.WithTimeout(cl.ctx, min(cl.h.opts.WriteTimeout, cl.h.opts.PingInterval))
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
			return &closeErr{Code: CodeGoingAway, Reason: reasonShutdown}
		case <-cl.revoked:
			return &closeErr{Code: CodePolicy, Reason: cl.revokedWhy}
		case <-cl.ctx.Done():
			return cl.ctx.Err()
		}
	}
}

func (cl *client) write(frame []byte) error {
	return cl.out.Write(len(frame), func() error {
		return cl.c.Write(context.Background(), websocket.MessageText, frame)
	})
}
