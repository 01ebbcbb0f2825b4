package acpws

import (
	"context"

	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/inbound"
	"github.com/coder/websocket"
)

// transport is what carries one `/acp` connection: a WebSocket (wsTransport) or Streamable HTTP
// (acphttp.Transport). Everything else — methods, attachments, the log cursors, fs delegation, the ordering of
// answers after updates — is the connection's and shared by both.
type transport interface {
	// Receive hands the client's messages to the connection's Dispatch until the client side ends (socket
	// closed, DELETE, idle) or ctx does, and returns why. No Dispatch runs once it has returned.
	Receive(ctx context.Context) error
	// Write sends one frame, called by the connection's writer only, under its watchdog. session is the
	// session the frame belongs to; "" for a response, which goes where its request asked.
	Write(session string, frame []byte) error
	// Ping checks that the peer is alive; an error ends the connection.
	Ping(ctx context.Context) error
	// End finishes the connection after the writer has stopped: err is why (a *closeErr carries a close code).
	End(err error)
	// EndStream ends the stream that carries session's frames alone, if the transport has one (Streamable
	// HTTP's session stream), once the connection was detached from the session because its principal lost
	// it or the session closed. Called by the writer, after the detach; it must not block.
	EndStream(session string)
	// EndClosedStream is EndStream for a session that closed: it waits for the answers still due on that
	// stream.
	EndClosedStream(session string)
	// Abort makes a write in progress fail at once (the write watchdog). It must not block.
	Abort()
	// Batcher holds frames ready together for one write (frameout.Writer.Batch); nil when the transport
	// sends each frame as it comes.
	Batcher() frameout.Batcher
}

// wsTransport is one WebSocket: one JSON-RPC message per text frame.
type wsTransport struct {
	// Static after construction.
	ws   *websocket.Conn
	held *frameout.HeldConn // under ws: frames ready together leave in one write
	c    *conn              // set before the connection runs
}

func (t *wsTransport) Batcher() frameout.Batcher { return t.held }

// Receive is the socket's only reader. Bad input never ends it short of a binary frame (1003), a text frame
// that is not UTF-8 (1007) or an oversized one (1009); a frame the inbound budget has no room for ends it
// with 1013. A frame's budget is released once Dispatch is done with its bytes (requests get copies of their
// id and params).
func (t *wsTransport) Receive(ctx context.Context) error {
	c := t.c
	for {
		f, err := c.h.opts.Inbound.Read(ctx, t.ws, c.h.opts.ReadLimit)
		if err != nil {
			return inbound.CloseError(err)
		}
		c.Dispatch(f.Data)
		f.Release()
	}
}

func (t *wsTransport) Write(_ string, frame []byte) error {
	return t.ws.Write(context.Background(), websocket.MessageText, frame)
}

func (t *wsTransport) Ping(ctx context.Context) error { return t.ws.Ping(ctx) }

func (t *wsTransport) End(err error) {
	if ce, ok := err.(*closeErr); ok {
		t.ws.Close(ce.Code, ce.Reason)
		return
	}
	t.ws.CloseNow()
}

func (t *wsTransport) Abort() { t.ws.CloseNow() }

func (t *wsTransport) EndStream(string) {} // one socket carries every session: it stays open

func (t *wsTransport) EndClosedStream(string) {}
