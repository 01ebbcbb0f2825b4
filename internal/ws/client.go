package ws

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
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

	// Frames are written without a context: given one that can end, coder/websocket arms and disarms a
	// context.AfterFunc around every frame (about a tenth of the gateway's CPU with ten clients). A watchdog
	// bounds writes instead: it runs every WriteTimeout/2 and closes the connection when the same write was
	// in progress at its previous run too, so a stuck write ends after WriteTimeout/2..WriteTimeout, as
	// with a deadline; and the connection is closed when ctx ends during a write. Per frame, that costs two
	// atomic stores.
	wstarted atomic.Uint64 // writes begun; written by the writer goroutine
	wdone    atomic.Uint64 // the number of the last write finished; written by the writer goroutine
	wseen    uint64        // wstarted at the watchdog's previous run; owned by the watchdog
	wdog     *time.Timer   // the watchdog; re-arms itself until wstop
	wstop    atomic.Bool

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

	cl.ping = time.NewTicker(cl.h.opts.PingInterval)
	stopWriter := cl.startWriter(ctx)
	err := cl.s.Follow(cl.start, cl, sessions.FollowLimits{Frames: cl.h.opts.QueueFrames, Bytes: cl.h.opts.QueueBytes})
	cl.ping.Stop()
	stopWriter()
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
			return &closeErr{CodeGoingAway, reasonShutdown}
		case <-cl.ctx.Done():
			return cl.ctx.Err()
		}
	}
}

func (cl *client) write(frame []byte) error {
	if err := cl.ctx.Err(); err != nil {
		return err
	}
	n := cl.wstarted.Add(1)
	err := cl.c.Write(context.Background(), websocket.MessageText, frame)
	cl.wdone.Store(n)
	return err
}

// startWriter readies write for the writer goroutine: its context and the watchdog. stop disarms them.
func (cl *client) startWriter(ctx context.Context) (stop func()) {
	cl.ctx = ctx
	cl.wdog = time.AfterFunc(time.Hour, cl.watch) // armed below, once cl.wdog is set for watch to re-arm
	cl.wdog.Reset(cl.h.opts.WriteTimeout / 2)
	stopOnCancel := context.AfterFunc(ctx, func() {
		if cl.writing() {
			cl.c.CloseNow()
		}
	})
	return func() {
		stopOnCancel()
		cl.wstop.Store(true)
		cl.wdog.Stop()
	}
}

// writing reports whether a write is in progress.
func (cl *client) writing() bool { return cl.wdone.Load() != cl.wstarted.Load() }

// watch is the write watchdog (see wstarted).
func (cl *client) watch() {
	if cl.wstop.Load() {
		return
	}
	started := cl.wstarted.Load()
	if started == cl.wseen && cl.wdone.Load() != started {
		cl.c.CloseNow() // the write fails and the writer ends the connection
		return
	}
	cl.wseen = started
	cl.wdog.Reset(cl.h.opts.WriteTimeout / 2)
}
