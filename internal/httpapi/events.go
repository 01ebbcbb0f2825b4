package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// Defaults for the event stream face.
const (
	pageLimitMax = 1000
	pageWaitMax  = 60 * time.Second
)

// events serves a session's stream on `GET /v1/sessions/{id}/events`: Server-Sent Events for
// `Accept: text/event-stream`, otherwise a JSON page for clients behind proxies that kill streams.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	after, hasAfter, err := afterParam(r)
	if err != nil {
		return err
	}
	epoch := r.URL.Query().Get("epoch")
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return s.sse(w, r, sess, sess.StartAt(after, hasAfter, epoch))
	}
	return s.page(w, r, sess, sess.StartAt(after, hasAfter, epoch))
}

// afterParam reads the resume position: `Last-Event-ID` (EventSource reconnects) wins over `?after=`.
func afterParam(r *http.Request) (uint64, bool, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, badRequest("after / Last-Event-ID must be a non-negative integer seq")
	}
	return n, true, nil
}

// sseSink writes the stream as Server-Sent Events: `id:` is the frame's seq; notifications outside the log
// carry no id, so a reconnect resumes from the last logged frame. Every write goes through the shared frame
// writer: a client that stops reading is dropped by its watchdog, as on the WebSocket faces.
type sseSink struct {
	w     *frameout.HeldWriter // the response, held until the writer catches up
	out   *frameout.Writer
	r     *http.Request
	beat  *time.Ticker
	drain <-chan struct{}
	// revoked is closed when the caller's credentials are revoked or expire: the stream ends.
	revoked <-chan struct{}
}

// errCredentialsRevoked ends the event stream of a principal the users file no longer lists, or whose token
// expired.
var errCredentialsRevoked = errors.New("credentials revoked")

func (k *sseSink) Frame(seq uint64, frame []byte) error {
	return k.out.Write(len(frame), func() error {
		// Flushed by Wait, with the frames ready beside it (frameout.Writer.Batch).
		var head [32]byte
		h := head[:0]
		if seq != 0 { // a re-sent pending request (0) has no id, so Last-Event-ID never moves backwards
			h = strconv.AppendUint(append(h, "id: "...), seq, 10)
			h = append(h, '\n')
		}
		h = append(h, "data: "...)
		if _, err := k.w.Write(h); err != nil {
			return err
		}
		if _, err := k.w.Write(frame); err != nil {
			return err
		}
		_, err := k.w.WriteString("\n\n")
		return err
	})
}

func (k *sseSink) Note(method string, params any) error {
	b, err := frameout.Notification(method, params)
	if err != nil {
		return err
	}
	return k.Frame(0, b)
}

func (k *sseSink) Wait(wake <-chan struct{}) error {
	for {
		if err := k.out.Flush(); err != nil {
			return err
		}
		select {
		case <-wake:
			return nil
		case <-k.beat.C:
			if err := k.out.Run(func() error {
				if _, err := k.w.WriteString(": heartbeat\n\n"); err != nil {
					return err
				}
				return k.w.Flush()
			}); err != nil {
				return err
			}
		case <-k.drain:
			return sessionerr.ErrShuttingDown
		case <-k.revoked:
			return errCredentialsRevoked
		case <-k.r.Context().Done():
			return k.r.Context().Err()
		}
	}
}

func (s *Server) sse(w http.ResponseWriter, r *http.Request, sess *sessions.Session, start sessions.Start) error {
	sub, ok := sess.AttachAs(principal.From(r.Context()))
	if !ok {
		p := problem(http.StatusServiceUnavailable, "too_many_clients", "the session is at its client limit")
		p.RetryAfter = 5
		return p
	}
	defer sub.Detach()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	beat := time.NewTicker(s.sseHeartbeat())
	defer beat.Stop()
	face := s.Metrics.Face("sse")
	face.Connected(1)
	defer face.Connected(-1)
	// A stuck write is ended by expiring the connection's write deadline: the handler cannot close it.
	held := frameout.NewHeldWriter(w, rc.Flush)
	out := frameout.Start(r.Context(), s.streamWriteTimeout(), face, func() { _ = rc.SetWriteDeadline(time.Unix(1, 0)) }).
		Batch(held)
	defer out.Stop()
	sink := &sseSink{w: held, out: out, r: r, beat: beat, drain: s.drainCh(), revoked: principal.Revoked(r.Context())}
	// A share that ends (sessionerr.ErrLost) ends the stream: reconnecting gets 404 like any unknown session.
	if err := sub.Follow(start, sink, s.streamLimits()); errors.Is(err, eventlog.ErrEvicted) {
		face.Evicted()
	}
	_ = out.Flush() // under the watchdog: the response's own flush when the handler returns has none
	// A closed session ends the stream after its logged `_gateway/session_status {status:"closed"}` frame,
	// which the subscriber has just been sent: nothing is added.
	return nil // the response has started; errors end the stream and the client reconnects
}

// pageSink collects frames for one JSON page and stops when it is full or caught up.
type pageSink struct {
	limit  int
	frames []json.RawMessage
	size   int
	last   uint64
	notes  []json.RawMessage
	wait   *time.Timer
	r      *http.Request
}

var errPageDone = errors.New("page done")

func (k *pageSink) Frame(seq uint64, frame []byte) error {
	if seq == 0 {
		// Re-sent pending requests are not page data: a poller would get them on every poll. Pages show
		// each frame once; pending requests are listed by GET /v1/sessions/{id}/permissions.
		return nil
	}
	k.frames = append(k.frames, frame)
	k.size += len(frame) + 1
	k.last = seq
	if len(k.frames) >= k.limit {
		return errPageDone
	}
	return nil
}

func (k *pageSink) Note(method string, params any) error {
	if method == "_gateway/replay_complete" {
		return nil // a page is always "replay"; lastSeq says where to continue
	}
	b, _ := frameout.Notification(method, params)
	k.notes = append(k.notes, b)
	return nil
}

func (k *pageSink) Wait(wake <-chan struct{}) error {
	if len(k.frames) > 0 || len(k.notes) > 0 || k.wait == nil {
		return errPageDone
	}
	select {
	case <-wake:
		return nil
	case <-k.wait.C:
		return errPageDone
	case <-k.r.Context().Done():
		return k.r.Context().Err()
	}
}

// page answers `{"frames":[…],"closed","epoch","headSeq","lastSeq","notes":[…]}`, frames first and byte for
// byte. With `wait`, an empty page waits up
// to that long for the first frame (long-poll).
func (s *Server) page(w http.ResponseWriter, r *http.Request, sess *sessions.Session, start sessions.Start) error {
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > pageLimitMax {
			return badRequest("limit must be an integer from 1 to %d", pageLimitMax)
		}
		limit = n
	}
	sink := &pageSink{limit: limit, last: start.Cursor, r: r}
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > pageWaitMax {
			return badRequest("wait must be a duration from 0s to %s", pageWaitMax)
		}
		if d > 0 {
			sink.wait = time.NewTimer(d)
			defer sink.wait.Stop()
		}
	}
	err := sess.Follow(start, sink, eventlog.FollowLimits{})
	if err != nil && !errors.Is(err, errPageDone) && !errors.Is(err, sessionerr.ErrSessionClosed) {
		return err
	}
	_, head := sess.Log().Bounds()
	// Frames go out byte for byte as the log holds them (encoding/json would re-escape them).
	meta, _ := json.Marshal(pageMeta{
		Closed: errors.Is(err, sessionerr.ErrSessionClosed), Epoch: sess.CurrentEpoch(), HeadSeq: head,
		LastSeq: sink.last, Notes: sink.notes,
	})
	out := make([]byte, 0, len(meta)+64+sink.size)
	out = append(out, `{"frames":[`...)
	for i, f := range sink.frames {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, f...)
	}
	out = append(out, "],"...)
	out = append(out, meta[1:]...)
	out = append(out, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out))) // one body, not chunks
	_, werr := w.Write(out)
	return werr
}

// pageMeta is what a page says besides its frames (fields in the order a map would give them).
type pageMeta struct {
	Closed  bool              `json:"closed"`
	Epoch   string            `json:"epoch"`
	HeadSeq uint64            `json:"headSeq"`
	LastSeq uint64            `json:"lastSeq"`
	Notes   []json.RawMessage `json:"notes"`
}
