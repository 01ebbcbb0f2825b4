package connlimit

import (
	"net/http"
	"time"
)

// TrackBusy marks r's connection busy while next serves r, and idle (a candidate for shedding) after. A
// WebSocket or an event stream stays busy for its whole life: its handler runs as long.
func TrackBusy(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := connOf(r)
		if c == nil {
			next.ServeHTTP(w, r)
			return
		}
		c.l.mu.Lock()
		c.busy++
		c.l.leaveIdleLocked(c)
		c.l.mu.Unlock()
		defer func() {
			c.l.mu.Lock()
			if c.busy--; c.busy == 0 && !c.closed {
				c.idleElem, c.idleSince = c.l.idle.PushBack(c), time.Now()
			}
			c.l.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

func (l *limitListener) leaveIdleLocked(c *limitConn) {
	if c.idleElem != nil {
		l.idle.Remove(c.idleElem)
		c.idleElem = nil
	}
}
