package main

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The lean client against coder/websocket's server: messages of every length encoding (7-bit, 16-bit,
// 64-bit, and larger than its read buffer), a fragmented message, a ping it must answer, its own masked
// writes echoed back, and the server's close as a websocket.CloseError.
func TestLeanClientSpeaksRFC6455(t *testing.T) {
	big := strings.Repeat("b", 100<<10) // > the 64 KiB read buffer
	sizes := []string{`{"a":1}`, strings.Repeat("m", 126), strings.Repeat("l", 70000), big}
	serverErr := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			serverErr <- err
			return
		}
		c.SetReadLimit(1 << 20)
		ctx := r.Context()
		serverErr <- func() error {
			for _, m := range sizes {
				if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					return err
				}
			}
			mw, err := c.Writer(ctx, websocket.MessageText)
			if err != nil {
				return err
			}
			for _, part := range []string{"frag", "men", "ted"} {
				if _, err := mw.Write([]byte(part)); err != nil {
					return err
				}
			}
			if err := mw.Close(); err != nil {
				return err
			}
			// Ping waits for the pong, which the client sends from its reads: read its echo concurrently.
			pinged := make(chan error, 1)
			go func() {
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				pinged <- c.Ping(pctx)
			}()
			_, echo, err := c.Read(ctx)
			if err != nil {
				return err
			}
			if err := c.Write(ctx, websocket.MessageText, echo); err != nil {
				return err
			}
			if _, _, err := c.Read(ctx); err != nil { // "bye"
				return err
			}
			c.CloseRead(ctx) // reads on: the pong may come after "bye"
			if err := <-pinged; err != nil {
				return err
			}
			return c.Close(4001, "evicted")
		}()
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := dialLean(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.closeNow()
	for _, want := range append(sizes, "fragmented") {
		b, err := c.next(ctx)
		if err != nil {
			t.Fatalf("next: %v (want %d bytes)", err, len(want))
		}
		if string(b) != want {
			t.Fatalf("next: %d bytes %.20q…, want %d bytes %.20q…", len(b), b, len(want), want)
		}
	}
	hello := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("p", 300) + `"}}`
	if err := c.write(ctx, []byte(hello)); err != nil {
		t.Fatal(err)
	}
	b, err := c.next(ctx) // the ping is answered on the way
	if err != nil || string(b) != hello {
		t.Fatalf("echo: %q, %v", b, err)
	}
	if err := c.write(ctx, []byte("bye")); err != nil {
		t.Fatal(err)
	}
	_, err = c.next(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4001 || ce.Reason != "evicted" {
		t.Fatalf("after the close: %v, want close 4001 evicted", err)
	}
	if err := <-serverErr; err != nil {
		t.Fatalf("server: %v", err)
	}
}

// A refused upgrade is an error that carries the server's status and body.
func TestLeanClientRefusedUpgrade(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"code":"session_not_found"}`, http.StatusNotFound)
	}))
	defer srv.Close()
	_, err := dialLean(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"))
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "session_not_found") {
		t.Fatalf("dial: %v", err)
	}
}

// rawWSServer upgrades one connection by hand, writes frames, and reports what the client sends back
// (opcode byte and unmasked payload) until the client closes or the test ends.
func rawWSServer(t *testing.T, frames ...[]byte) (string, <-chan []byte) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 16)
	done := make(chan struct{})
	var conn net.Conn
	var mu sync.Mutex
	go func() {
		defer close(done)
		defer close(got)
		c, err := l.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		conn = c
		mu.Unlock()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + wsGUID))
		c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"))
		for _, f := range frames {
			c.Write(f)
		}
		for {
			var h [6]byte
			if _, err := io.ReadFull(br, h[:]); err != nil {
				return
			}
			p := make([]byte, h[1]&0x7f)
			if _, err := io.ReadFull(br, p); err != nil {
				return
			}
			for i := range p {
				p[i] ^= h[2+i&3]
			}
			got <- append([]byte{h[0]}, p...)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		if conn != nil {
			conn.Close()
		}
		mu.Unlock()
		<-done
	})
	return "ws://" + l.Addr().String() + "/", got
}

func rawFrame(fin bool, op byte, p []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	return append([]byte{b0, byte(len(p))}, p...)
}

// A ping between the fragments of a message is answered, and the message arrives whole; frames RFC 6455
// forbids fail the connection with close 1002.
func TestLeanClientFragmentsAndProtocolErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, got := rawWSServer(t, rawFrame(false, opText, []byte("ab")), rawFrame(true, opPing, []byte("p")), rawFrame(true, opContinuation, []byte("cd")))
	c, err := dialLean(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := c.next(ctx); err != nil || string(b) != "abcd" {
		t.Fatalf("fragmented message: %q, %v", b, err)
	}
	if p := <-got; p[0] != 0x80|opPong || string(p[1:]) != "p" {
		t.Fatalf("answer to the ping: %q", p)
	}
	c.closeNow()

	for _, tc := range []struct {
		name   string
		frames [][]byte
	}{
		{"a text frame inside a fragmented message", [][]byte{rawFrame(false, opText, []byte("ab")), rawFrame(true, opText, []byte("cd"))}},
		{"a continuation with no message open", [][]byte{rawFrame(true, opContinuation, []byte("zz"))}},
		{"a fragmented ping", [][]byte{rawFrame(false, opPing, []byte("p"))}},
		{"a 126-byte ping", [][]byte{append([]byte{0x80 | opPing, 126, 0, 126}, make([]byte, 126)...)}},
		{"a 1-byte close payload", [][]byte{rawFrame(true, opClose, []byte{3})}},
	} {
		u, got := rawWSServer(t, tc.frames...)
		c, err := dialLean(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := c.next(ctx); err == nil || !strings.Contains(err.Error(), "protocol error") {
			t.Errorf("%s: got %q, %v; want a protocol error", tc.name, b, err)
		}
		if p := <-got; len(p) != 3 || p[0] != 0x80|opClose || p[1] != 0x03 || p[2] != 0xea {
			t.Errorf("%s: the client sent %q, want close 1002", tc.name, p)
		}
		c.closeNow()
	}
}
