package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
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
