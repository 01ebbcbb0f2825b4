package httpapi

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// limitBodyTime gives a request body BodyTimeout to arrive, so a client trickling a body cannot hold a
// connection (and a descriptor) for ever. The deadline is the connection's read deadline, set per request:
// http.Server.ReadTimeout would cut WebSockets too. Upgrades and bodyless requests (event streams, long
// polls) get none; once the body has been read the deadline is lifted, so a handler that then waits (a
// prompt with ?wait=true) is not cut off by it.
func (s *Server) limitBodyTime(next http.Handler) http.Handler {
	if s.BodyTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || isUpgrade(r) {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(s.BodyTimeout)); err == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when the body has been read to its end. A body left unread keeps
// it: the server's discarding of the rest is bounded too.
type deadlineBody struct {
	io.ReadCloser
	lift func()    // Static after construction.
	once sync.Once // guards lift
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}
