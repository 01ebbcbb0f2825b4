package connlimit

import (
	"container/list"
	"net/http"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
)

// Authenticated takes r's connection out of the unauthenticated count and counts it for who. It reports
// false when who, a user, already holds MaxPerUser connections of which none is idle: the caller refuses the
// request (429) and the connection closes. Their longest idle connection is closed instead when there is one,
// so a user's own newest connection is always served.
func Authenticated(r *http.Request, who principal.Principal) bool {
	c := connOf(r)
	if c == nil {
		return true
	}
	l := c.l
	l.mu.Lock()
	if l.leavePendingLocked(c) && l.lim.WriteTimeout > 0 {
		_ = c.Conn.SetWriteDeadline(time.Time{})
	}
	if l.lim.MaxPerUser <= 0 || c.user == who.ID || c.closed {
		l.mu.Unlock()
		return true
	}
	l.leaveUserLocked(c) // a connection (a proxy's) may carry another principal's requests than before
	if who.IsZero() || who.IsAdmin() {
		l.mu.Unlock()
		return true
	}
	conns := l.users[who.ID]
	var victim *limitConn
	if conns != nil && conns.Len() >= l.lim.MaxPerUser {
		for e := conns.Front(); e != nil; e = e.Next() {
			if o := e.Value.(*limitConn); o.idleElem != nil && (victim == nil || o.idleSince.Before(victim.idleSince)) {
				victim = o
			}
		}
		if victim == nil {
			l.mu.Unlock()
			return false
		}
		l.leaveUserLocked(victim)
		l.leaveIdleLocked(victim)
	}
	if conns == nil {
		conns = list.New()
		l.users[who.ID] = conns
	}
	c.user, c.userElem = who.ID, conns.PushBack(c)
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Conn.Close() // its server goroutine fails on its next read and closes it through forget
	}
	return true
}

// leaveUserLocked stops counting c for its user.
func (l *limitListener) leaveUserLocked(c *limitConn) {
	if c.userElem == nil {
		return
	}
	conns := l.users[c.user]
	conns.Remove(c.userElem)
	if conns.Len() == 0 {
		delete(l.users, c.user)
	}
	c.user, c.userElem = "", nil
}
