package httpapi

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// LimitUnauthenticated wraps ln so at most max accepted connections are open that have not yet carried an
// authenticated request: a connection past the cap is closed as soon as it is accepted. Slow clients that
// never authenticate (slowloris) then cannot take every descriptor from the ones that do; deadlines shed
// them and make room again. Connections that authenticated, WebSockets included, do not count. Serve with
// http.Server.ConnContext set to ConnContext so requests can mark their connection. max <= 0 = no cap.
func LimitUnauthenticated(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return &pendingListener{Listener: ln, max: int64(max)}
}

type pendingListener struct {
	net.Listener
	max     int64        // Static after construction.
	pending atomic.Int64 // connections accepted and not yet authenticated nor closed
}

// Accept is called from one goroutine (http.Server's accept loop), the only one that increments pending.
func (l *pendingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.pending.Load() >= l.max {
			_ = c.Close()
			continue
		}
		l.pending.Add(1)
		return &pendingConn{Conn: c, l: l}, nil
	}
}

// pendingConn counts toward its listener's cap until it authenticates or closes, whichever comes first.
type pendingConn struct {
	net.Conn
	l     *pendingListener // Static after construction.
	leave sync.Once
}

func (c *pendingConn) authenticated() { c.leave.Do(func() { c.l.pending.Add(-1) }) }

func (c *pendingConn) Close() error {
	c.authenticated() // no longer pending either way
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
