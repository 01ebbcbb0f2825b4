package connlimit

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bounds the connections Wrap accepts. Zero values mean no bound, except where noted.
type Limits struct {
	// MaxUnauthenticated bounds the open connections that have not yet carried an authenticated request: past
	// it the oldest is closed to make room (see pendingGrace and burstFactor). 0 = unlimited.
	MaxUnauthenticated int
	// WriteTimeout bounds each write to a connection while it is unauthenticated; 0 = no bound.
	WriteTimeout time.Duration
	// MaxPerUser bounds the open connections of one principal of role user (admins are not bound): past it
	// their oldest idle connection is closed, or the request is refused when none is idle. 0 = unlimited.
	MaxPerUser int
	// DescriptorLimit is the process's descriptor budget: near it, idle keep-alive connections are closed,
	// oldest first, before accept fails. 0 = RLIMIT_NOFILE; < 0 = no shedding.
	DescriptorLimit int
	// OpenDescriptors counts the process's open descriptors; nil = count /proc/self/fd (where there is none:
	// the listener's open connections).
	OpenDescriptors func() int
}

// Wrap wraps ln so the connections it accepts are held to lim. Serve with http.Server.ConnContext set to
// ConnContext so requests can reach their connection's accounting; httpapi's router marks connections
// authenticated (Authenticated), by principal, and busy while a request runs on them (TrackBusy).
func Wrap(ln net.Listener, lim Limits) net.Listener {
	l := &limitListener{Listener: ln, lim: lim, pending: list.New(), idle: list.New(), users: map[string]*list.List{}}
	l.shedAt, l.checkFrom = shedThresholds(lim.DescriptorLimit)
	if l.lim.OpenDescriptors == nil {
		l.lim.OpenDescriptors = openDescriptors(l.openConns)
	}
	return l
}

// Unauthenticated is Wrap with only the unauthenticated cap and its write timeout.
func Unauthenticated(ln net.Listener, max int, writeTimeout time.Duration) net.Listener {
	return Wrap(ln, Limits{MaxUnauthenticated: max, WriteTimeout: writeTimeout, DescriptorLimit: -1})
}

// pendingGrace is how long a connection may wait for its first authenticated request before it counts as
// a likely slowloris: legitimate clients send that request at once, but on a loaded machine the server may take
// a while to read it.
const pendingGrace = time.Second

// burstFactor bounds how far past the cap a burst of fresh connections may go: twice the default cap still
// fits a 1 024-descriptor limit beside the authenticated connections.
const burstFactor = 2

type limitListener struct {
	net.Listener
	lim       Limits       // Static after construction.
	shedAt    int          // Static after construction; open descriptors from which idle connections are shed (0 = never).
	checkFrom int          // Static after construction; open connections from which descriptors are counted at all.
	desc      descEstimate // Accept's goroutine only.

	mu      sync.Mutex
	open    int                   // Guarded by mu; accepted and not closed.
	pending *list.List            // Guarded by mu; *limitConn, oldest first: not yet authenticated nor closed.
	idle    *list.List            // Guarded by mu; *limitConn, longest idle first: served a request, none running.
	users   map[string]*list.List // Guarded by mu; principal id → its *limitConn, oldest first.
}

// Accept is called from one goroutine (http.Server's accept loop), the only one that adds connections. Near
// the descriptor limit, and when accept itself runs out of descriptors, it first closes idle connections.
func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	// A closed connection's descriptor is freed once its server goroutine lets go of it, so an accept right
	// after may fail again: a few tries, then http.Server's own back-off.
	for try := 0; try < 8 && err != nil && isDescriptorExhaustion(err) && l.shedIdle(1) > 0; try++ {
		c, err = l.Listener.Accept()
	}
	if err != nil {
		return nil, err
	}
	now := time.Now()
	l.shedNearLimit(now)
	lc := &limitConn{Conn: c, l: l, since: now}
	var oldest *limitConn
	l.mu.Lock()
	l.open++
	if max := l.lim.MaxUnauthenticated; max > 0 {
		if n := l.pending.Len(); n >= max {
			if front := l.pending.Front().Value.(*limitConn); n >= burstFactor*max || now.Sub(front.since) >= pendingGrace {
				oldest = front
				l.leavePendingLocked(oldest)
			}
		}
		lc.pendingElem = l.pending.PushBack(lc)
	}
	l.mu.Unlock()
	if oldest != nil {
		_ = oldest.Conn.Close() // its server goroutine fails on its next read or write and closes it again
	}
	return lc, nil
}

func (l *limitListener) openConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

func (l *limitListener) leavePendingLocked(c *limitConn) bool {
	if c.pendingElem == nil {
		return false
	}
	l.pending.Remove(c.pendingElem)
	c.pendingElem = nil
	return true
}

func (l *limitListener) isPending(c *limitConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return c.pendingElem != nil
}

// forget takes a closing connection out of every list; false when it was already closed.
func (l *limitListener) forget(c *limitConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed {
		return false
	}
	c.closed = true
	l.open--
	l.leavePendingLocked(c)
	l.leaveIdleLocked(c)
	l.leaveUserLocked(c)
	return true
}

// limitConn is one accepted connection and its place in its listener's accounting.
type limitConn struct {
	net.Conn
	l     *limitListener // Static after construction.
	since time.Time      // Static after construction; when it was accepted.

	// Guarded by l.mu.
	pendingElem *list.Element // nil once authenticated, closed or evicted.
	idleElem    *list.Element // set while idle: it served a request and runs none.
	idleSince   time.Time     // when it last became idle
	busy        int           // requests running on it
	user        string        // the principal of role user it is counted for; "" = none
	userElem    *list.Element
	closed      bool
}

func (c *limitConn) Write(b []byte) (int, error) {
	if c.l.lim.WriteTimeout > 0 && c.l.isPending(c) {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.l.lim.WriteTimeout))
	}
	return c.Conn.Write(b)
}

func (c *limitConn) Close() error {
	c.l.forget(c)
	return c.Conn.Close()
}

type connKeyType struct{}

// ConnContext is the http.Server ConnContext hook that lets requests reach their connection's accounting.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitConn); ok {
		return context.WithValue(ctx, connKeyType{}, lc)
	}
	return ctx
}

func connOf(r *http.Request) *limitConn {
	lc, _ := r.Context().Value(connKeyType{}).(*limitConn)
	return lc
}
