package httpapi

import (
	"net/http"
	"time"
)

// limitBodyTime gives a request body BodyTimeout to arrive, so a client trickling a body cannot hold a
// connection (and a descriptor) for ever. The deadline is the connection's read deadline, set per request:
// http.Server.ReadTimeout would cut WebSockets too. Upgrades and bodyless requests (event streams, long
// polls) get none. net/http clears the deadline itself once the body has been read to its end (it then
// watches the connection for the client going away), so a handler that waits afterwards (a prompt with
// ?wait=true) is not cut off; a body left unread keeps it, which bounds the server's discarding of the rest.
func (s *Server) limitBodyTime(next http.Handler) http.Handler {
	if s.BodyTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && !isUpgrade(r) {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.BodyTimeout))
		}
		next.ServeHTTP(w, r)
	})
}
