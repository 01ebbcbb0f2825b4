package httpapi

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// LimitUnauthenticated wraps ln so at most max accepted connections are open that have not yet carried an
// authenticated request. When a new connection would pass the cap, the oldest such connection is closed to
// make room: a client that authenticates does so in its first request, so the connection that has waited
// longest without doing it is the likeliest slowloris, and a fresh client is always served. A burst of
// clients (a reconnect storm, a load test) is not a slowloris: while the oldest has waited less than
// pendingGrace, new connections are let past the cap, up to burstFactor times it. While a
// connection is unauthenticated, each write to it must finish within writeTimeout (0 = no bound), so a client
// that sends requests and never reads the answers cannot hold its place either. Connections that
// authenticated, WebSockets included, do not count and get no such deadline. Serve with
// http.Server.ConnContext set to ConnContext so requests can mark their connection. max <= 0 = no cap.
func LimitUnauthenticated(ln net.Listener, max int, writeTimeout time.Duration) net.Listener {
	if max <= 0 {
		return ln
	}
	return &pendingListener{Listener: ln, max: max, writeTimeout: writeTimeout, pending: list.New()}
}

// pendingGrace is how long a connection may wait for its first authenticated request before it counts as
// a likely slowloris: legitimate clients send that request at once, but on a loaded machine the server may take
// a while to read it.
const pendingGrace = time.Second

// burstFactor bounds how far past the cap a burst of fresh connections may go: twice the default cap still
// fits a 1 024-descriptor limit beside the authenticated connections.
const burstFactor = 2

type pendingListener struct {
	net.Listener
	max          int           // Static after construction.
	writeTimeout time.Duration // Static after construction.

	mu      sync.Mutex
	pending *list.List // Guarded by mu; *pendingConn, oldest first: accepted, not yet authenticated nor closed.
}

// Accept is called from one goroutine (http.Server's accept loop), the only one that adds to pending.
func (l *pendingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	pc := &pendingConn{Conn: c, l: l, since: now}
	var oldest *pendingConn
	l.mu.Lock()
	if n := l.pending.Len(); n >= l.max {
		if front := l.pending.Front().Value.(*pendingConn); n >= burstFactor*l.max || now.Sub(front.since) >= pendingGrace {
			oldest = l.pending.Remove(l.pending.Front()).(*pendingConn)
			oldest.elem = nil
		}
	}
	pc.elem = l.pending.PushBack(pc)
	l.mu.Unlock()
	if oldest != nil {
		_ = oldest.Conn.Close() // its server goroutine fails on its next read or write and closes it again
	}
	return pc, nil
}

// leave takes c out of the pending list (authenticated, closed or evicted); false when it was not in it.
func (l *pendingListener) leave(c *pendingConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem == nil {
		return false
	}
	l.pending.Remove(c.elem)
	c.elem = nil
	return true
}

func (l *pendingListener) isPending(c *pendingConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return c.elem != nil
}

// pendingConn counts toward its listener's cap until it authenticates, closes or is evicted.
type pendingConn struct {
	net.Conn
	l     *pendingListener // Static after construction.
	since time.Time        // Static after construction; when it was accepted.
	elem  *list.Element    // Guarded by l.mu; nil once no longer pending.
}

// authenticated ends the connection's pending state and lifts its write deadline.
func (c *pendingConn) authenticated() {
	if c.l.leave(c) && c.l.writeTimeout > 0 {
		_ = c.Conn.SetWriteDeadline(time.Time{})
	}
}

func (c *pendingConn) Write(b []byte) (int, error) {
	if c.l.writeTimeout > 0 && c.l.isPending(c) {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.l.writeTimeout))
	}
	return c.Conn.Write(b)
}

func (c *pendingConn) Close() error {
	c.l.leave(c)
	return c.Conn.Close()
}

type connKeyType struct{}

// ConnContext is the http.Server ConnContext hook that lets requests reach their connection's accounting.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if pc, ok := c.(*pendingConn); ok {
		return context.WithValue(ctx, connKeyType{}, pc)
	}
	return ctx
}

// connAuthenticated takes r's connection out of the unauthenticated count.
func connAuthenticated(r *http.Request) {
	if pc, ok := r.Context().Value(connKeyType{}).(*pendingConn); ok {
		pc.authenticated()
	}
}
