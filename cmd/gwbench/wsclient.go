package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// wsConn is a benchmark client's WebSocket: whole messages in, text messages out.
type wsConn interface {
	// next returns the next data message; it stays valid until the following call. A close frame from the
	// server is a websocket.CloseError.
	next(ctx context.Context) ([]byte, error)
	write(ctx context.Context, text []byte) error
	closeNow()
}

// wsClientKind chooses the clients' WebSocket implementation (-ws-client): "lean" (leanConn) or "coder"
// (coder/websocket, as the gateway's own tests and a Go client would use it).
var wsClientKind = "lean"

// dialWS opens a benchmark client's WebSocket of the kind -ws-client names.
func dialWS(ctx context.Context, u string) (wsConn, error) {
	if wsClientKind == "coder" {
		c, _, err := websocket.Dial(ctx, u, nil)
		if err != nil {
			return nil, err
		}
		c.SetReadLimit(64 << 20)
		return &coderConn{c: c}, nil
	}
	return dialLean(ctx, u)
}

// coderConn reads whole messages of a coder/websocket connection into one reused buffer.
type coderConn struct {
	c   *websocket.Conn
	buf bytes.Buffer
}

func (f *coderConn) next(ctx context.Context) ([]byte, error) {
	_, r, err := f.c.Reader(ctx)
	if err != nil {
		return nil, err
	}
	f.buf.Reset()
	if _, err := f.buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return f.buf.Bytes(), nil
}

func (f *coderConn) write(ctx context.Context, text []byte) error {
	return f.c.Write(ctx, websocket.MessageText, text)
}

func (f *coderConn) closeNow() { f.c.CloseNow() }

// leanConn is the least a WebSocket client (RFC 6455) can do per message: parse the frame header from a
// bufio.Reader and copy the payload into one reused buffer. The benchmark's clients share the machine's cores
// with the agent and the gateway, and coder/websocket's Reader (two channel locks, a context.AfterFunc and a
// reader object per message) cost more CPU per message than the gateway spends on it; with this client the
// session WebSocket and /acp rows cost the client about what an SSE client's line reads cost. It answers
// pings, reports close frames as websocket.CloseError, and sends masked text frames. No extensions.
type leanConn struct {
	conn     net.Conn
	br       *bufio.Reader // owned by the reading goroutine
	msg      []byte        // the message being returned; owned by the reading goroutine
	deadline time.Time     // the read deadline set last; owned by the reading goroutine

	wmu  sync.Mutex // writes come from the reader (pongs) and from others (requests, answers)
	wbuf []byte     // guarded by wmu
}

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func dialLean(ctx context.Context, rawURL string) (*leanConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "ws" {
		return nil, fmt.Errorf("lean client: scheme %q (only ws://)", u.Scheme)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	var nonce [16]byte
	rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req := &http.Request{Method: "GET", URL: u, Host: u.Host, Header: http.Header{
		"Upgrade":               {"websocket"},
		"Connection":            {"Upgrade"},
		"Sec-WebSocket-Key":     {key},
		"Sec-WebSocket-Version": {"13"},
	}}
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %s %s", resp.Status, bytes.TrimSpace(b))
	}
	sum := sha1.Sum([]byte(key + wsGUID))
	if resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		conn.Close()
		return nil, errors.New("websocket handshake: wrong Sec-WebSocket-Accept")
	}
	conn.SetDeadline(time.Time{})
	return &leanConn{conn: conn, br: br}, nil
}

// WebSocket opcodes.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// next reads frames until a whole data message: fragments are joined, pings answered, pongs skipped. A frame
// RFC 6455 forbids (§5.4, §5.5: a data frame inside a fragmented message, a continuation outside one, a
// fragmented or over-125-byte control frame, a 1-byte close payload) fails the connection with 1002.
func (c *leanConn) next(ctx context.Context) ([]byte, error) {
	if dl, _ := ctx.Deadline(); !dl.Equal(c.deadline) {
		c.conn.SetReadDeadline(dl)
		c.deadline = dl
	}
	c.msg = c.msg[:0]
	open := false // a fragmented message has begun
	for {
		fin, op, payload, err := c.frame()
		if err != nil {
			return nil, err
		}
		if op >= opClose && (!fin || len(payload) > 125) {
			return nil, c.fail("a fragmented or over-125-byte control frame")
		}
		switch op {
		case opText, opBinary:
			if open {
				return nil, c.fail("a data frame inside a fragmented message")
			}
			if fin {
				return payload, nil // the common case: one frame, returned in place
			}
			c.msg, open = append(c.msg, payload...), true
		case opContinuation:
			if !open {
				return nil, c.fail("a continuation frame outside a fragmented message")
			}
			c.msg = append(c.msg, payload...)
			if fin {
				return c.msg, nil
			}
		case opPing:
			if err := c.send(opPong, payload); err != nil {
				return nil, err
			}
		case opPong:
		case opClose:
			if len(payload) == 1 {
				return nil, c.fail("a close frame with a 1-byte payload")
			}
			ce := websocket.CloseError{Code: websocket.StatusNoStatusRcvd}
			if len(payload) >= 2 {
				ce.Code = websocket.StatusCode(binary.BigEndian.Uint16(payload))
				ce.Reason = string(payload[2:])
			}
			_ = c.send(opClose, payload[:min(2, len(payload))])
			return nil, ce
		default:
			return nil, c.fail(fmt.Sprintf("unknown opcode %#x", op))
		}
	}
}

// fail sends close 1002 (protocol error) and returns the error that ends the connection.
func (c *leanConn) fail(why string) error {
	_ = c.send(opClose, binary.BigEndian.AppendUint16(nil, uint16(websocket.StatusProtocolError)))
	return errors.New("websocket: protocol error: " + why)
}

// frame reads one frame; its payload stays valid until the next read.
func (c *leanConn) frame() (fin bool, op byte, payload []byte, err error) {
	h, err := c.br.Peek(2)
	if err != nil {
		return false, 0, nil, err
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0f
	if h[0]&0x70 != 0 {
		return false, 0, nil, errors.New("websocket: reserved bits set (no extension was negotiated)")
	}
	if h[1]&0x80 != 0 {
		return false, 0, nil, errors.New("websocket: masked frame from the server")
	}
	n, hdr := uint64(h[1]&0x7f), 2
	switch n {
	case 126:
		hdr = 4
	case 127:
		hdr = 10
	}
	if hdr > 2 {
		if h, err = c.br.Peek(hdr); err != nil {
			return false, 0, nil, err
		}
		if hdr == 4 {
			n = uint64(binary.BigEndian.Uint16(h[2:]))
		} else {
			n = binary.BigEndian.Uint64(h[2:])
		}
	}
	if n > 64<<20 {
		return false, 0, nil, fmt.Errorf("websocket: a %d-byte frame (the limit is 64 MiB)", n)
	}
	c.br.Discard(hdr)
	if int(n) <= c.br.Size() {
		// The payload fits the reader's buffer: return it in place, without a copy.
		if payload, err = c.br.Peek(int(n)); err != nil {
			return false, 0, nil, err
		}
		c.br.Discard(int(n))
		return fin, op, payload, nil
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return false, 0, nil, err
	}
	return fin, op, payload, nil
}

func (c *leanConn) write(_ context.Context, text []byte) error { return c.send(opText, text) }

// send writes one masked frame (a client must mask, RFC 6455 §5.3).
func (c *leanConn) send(op byte, p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b := append(c.wbuf[:0], 0x80|op)
	switch n := len(p); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xffff:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	b = append(b, mask[:]...)
	start := len(b)
	b = append(b, p...)
	for i := range p {
		b[start+i] ^= mask[i&3]
	}
	c.wbuf = b
	_, err := c.conn.Write(b)
	return err
}

func (c *leanConn) closeNow() { c.conn.Close() }
