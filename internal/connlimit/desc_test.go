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

// descListener is a Wrap listener under a limit of 16 (idle connections shed from 14 open descriptors,
// descriptors counted from 4 open connections) whose descriptor count is others plus its open connections,
// with n idle connections; counts says how often the descriptors were counted.
func descListener(t *testing.T, n int, others *int, counts *int) *limitListener {
	var l *limitListener
	l = Wrap(nil, Limits{DescriptorLimit: 16, OpenDescriptors: func() int {
		*counts++
		return *others + l.openConns()
	}}).(*limitListener)
	for range n {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		c := &limitConn{Conn: a, l: l}
		l.mu.Lock()
		l.open++
		c.idleElem = l.idle.PushBack(c)
		l.mu.Unlock()
	}
	return l
}

// TestAcceptsCountDescriptorsOncePerRecount: counting reads all of /proc/self/fd, so accepts above checkFrom
// count once every recountEvery and estimate from the connections in between (each accept counted: the
// scale benchmark's 1 000 prompts beside 10 000 WebSockets waited 6–8 s for the accept loop).
func TestAcceptsCountDescriptorsOncePerRecount(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	others, counts := 0, 0
	l := descListener(t, 5, &others, &counts)
	for range 1000 {
		l.shedNearLimit(t0)
	}
	if want := (1000 + recountEvery - 1) / recountEvery; counts != want {
		t.Fatalf("1000 accepts counted the descriptors %d times, want %d", counts, want)
	}
	if l.openConns() != 5 {
		t.Fatalf("shed %d connections under the limit", 5-l.openConns())
	}
	l.shedNearLimit(t0.Add(recountAfter)) // an accept after a quiet second counts again, whatever came before
	if want := (1000+recountEvery-1)/recountEvery + 1; counts != want {
		t.Fatalf("an accept %s after the last count did not count: %d counts, want %d", recountAfter, counts, want)
	}
}

// TestDescriptorEstimateFollowsConnectionsAndRecounts: between counts the estimate moves with the listener's
// connections; descriptors opened elsewhere are seen at the next count.
func TestDescriptorEstimateFollowsConnectionsAndRecounts(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	others, counts := 4, 0
	l := descListener(t, 9, &others, &counts) // 13 descriptors: one under shedAt
	l.shedNearLimit(t0)
	if counts != 1 || l.openConns() != 9 {
		t.Fatalf("counts %d, open %d: want 1 count and nothing shed", counts, l.openConns())
	}
	l.mu.Lock()
	l.open++ // one more connection: the estimate reaches shedAt without a count
	l.mu.Unlock()
	l.shedNearLimit(t0)
	if counts != 1 || l.openConns() != 9 {
		t.Fatalf("counts %d, open %d: want the estimate to shed the longest idle connection, no count", counts, l.openConns())
	}
	others = 7 // descriptors opened elsewhere: 16 with 9 connections
	for range recountEvery - 2 {
		l.shedNearLimit(t0)
	}
	if l.openConns() != 9 {
		t.Fatalf("shed before the next count: open %d", l.openConns())
	}
	l.shedNearLimit(t0)
	if counts != 2 || l.openConns() != 6 {
		t.Fatalf("counts %d, open %d: want the next count to shed down to 13 descriptors", counts, l.openConns())
	}
}
