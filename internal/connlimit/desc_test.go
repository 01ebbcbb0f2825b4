package connlimit

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// descServer serves TrackBusy around /healthz and /block (which runs until release is closed) on a
// Wrap listener whose descriptor count is the open connections plus base, under a limit of 16: idle
// connections are shed from 14 open descriptors.
type descServer struct {
	srv     *httptest.Server
	release chan struct{}
	failing *failingListener
}

func newDescServer(t *testing.T, base int) *descServer {
	ds := &descServer{release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
		<-ds.release
	})
	ds.srv = httptest.NewUnstartedServer(TrackBusy(mux))
	ds.failing = &failingListener{Listener: ds.srv.Listener}
	var l *limitListener
	l = Wrap(ds.failing, Limits{DescriptorLimit: 16, OpenDescriptors: func() int { return base + l.openConns() }}).(*limitListener)
	ds.srv.Listener = l
	ds.srv.Config.ConnContext = ConnContext
	ds.srv.Start()
	t.Cleanup(func() {
		close(ds.release)
		ds.srv.Close()
	})
	return ds
}

// failingListener fails the next accepts with EMFILE, as a process out of descriptors does.
type failingListener struct {
	net.Listener
	fail atomic.Int32
}

func (f *failingListener) Accept() (net.Conn, error) {
	if f.fail.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	f.fail.Store(0)
	return f.Listener.Accept()
}

type keepAlive struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func (ds *descServer) dial(t *testing.T) *keepAlive {
	t.Helper()
	c, err := net.Dial("tcp", ds.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &keepAlive{t: t, c: c, r: bufio.NewReader(c)}
}

// get sends GET path and reads the response head (and the body, unless the handler is still running).
func (k *keepAlive) get(path string, whole bool) {
	k.t.Helper()
	if _, err := io.WriteString(k.c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		k.t.Fatal(err)
	}
	_ = k.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		k.t.Fatalf("GET %s: %v %v", path, resp, err)
	}
	if whole {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func (k *keepAlive) closedByPeer() bool {
	_ = k.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	_, err := k.r.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestIdleKeepAlivesAreShedNearTheDescriptorLimit: with 4 descriptors used elsewhere and a limit of 16, the
// connections may hold 9 descriptors; each connection past it closes the longest idle keep-alive, never one
// with a request running (here a stream, as an event stream or a WebSocket would be).
func TestIdleKeepAlivesAreShedNearTheDescriptorLimit(t *testing.T) {
	ds := newDescServer(t, 4)
	busy := ds.dial(t)
	busy.get("/block", false)
	var idle []*keepAlive
	for range 12 {
		k := ds.dial(t)
		k.get("/healthz", true)
		idle = append(idle, k)
	}
	// 13 connections were accepted; from the 11th on, each accept found 10 open (14 descriptors) and shed the
	// longest idle one: the first three idle keep-alives.
	for i, k := range idle[:3] {
		if !k.closedByPeer() {
			t.Fatalf("idle keep-alive %d stayed open past the descriptor limit", i)
		}
	}
	for _, k := range idle[3:] {
		k.get("/healthz", true)
	}
	ds.release <- struct{}{}
	_ = busy.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	if b, err := busy.r.Peek(1); err != nil || len(b) == 0 {
		t.Fatalf("the busy connection was shed: %v", err)
	}
}

// TestAcceptOutOfDescriptorsShedsAnIdleKeepAlive: when accept itself fails with EMFILE, the longest idle
// keep-alive is closed and accept tried again at once, so a new client is served instead of waiting for the
// server's accept back-off while idle connections hold every descriptor.
func TestAcceptOutOfDescriptorsShedsAnIdleKeepAlive(t *testing.T) {
	ds := newDescServer(t, 0)
	first, second := ds.dial(t), ds.dial(t)
	first.get("/healthz", true)
	second.get("/healthz", true)
	ds.failing.fail.Store(1)
	fresh := ds.dial(t)
	fresh.get("/healthz", true)
	if !first.closedByPeer() {
		t.Fatal("accept ran out of descriptors and no idle keep-alive was closed")
	}
	second.get("/healthz", true)
}
