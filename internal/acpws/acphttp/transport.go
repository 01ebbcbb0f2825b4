package acphttp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/frameout"
)

// Transport is one `/acp` connection over Streamable HTTP: the client POSTs its messages, and the
// gateway's go out on SSE streams it opens with GET — one for the connection, one per session. The
// connection's writer queues each frame on the stream it belongs to (a session's frames on its session
// stream, a response on the stream of its request); the GET that holds a stream (its receiver) writes what
// is queued. Frames wait for a receiver, at most Config.QueueBytes of them across the connection's
// streams: past it the writer waits, and a wait past Config.WriteTimeout (the frame writer's watchdog)
// ends the connection, as a WebSocket that stops reading is ended.
type Transport struct {
	// Static after construction.
	s        *Server
	id       string        // Acp-Connection-Id
	agent    string        // the agent of the URL it was made on
	owner    string        // id of the principal whose initialize made it: only they may use it
	c        Conn          // set before the connection runs
	limit    int64         // bytes queued across the streams before the writer waits
	deleted  chan struct{} // closed by DELETE (deleteOnce): the client ended the connection
	ended    chan struct{} // closed by End (endOnce): receivers write what is queued and finish
	dead     chan struct{} // closed by Abort (abortOnce): receivers and a waiting writer stop at once
	activity chan struct{} // capacity 1; receivers and POSTs → Receive: active changed
	initial  chan []byte   // capacity 1; the writer → the initialize POST: its answer

	deleteOnce, endOnce, abortOnce sync.Once

	mu       sync.Mutex
	streams  map[string]*outStream // Guarded by mu; by session id, "" = the connection's stream.
	buffered int64                 // Guarded by mu; bytes queued on every stream.
	room     chan struct{}         // Guarded by mu; closed (and reset) when a receiver takes frames; nil when nobody waits.
	routes   map[string]route      // Guarded by mu; where the response to each pending request goes, by idKey.
	// endWhenAnswered names session streams to end once no answer routed to them is pending (their session
	// closed while the client waited on a request about it, such as its own session/close). Guarded by mu.
	endWhenAnswered map[string]bool
	active          int            // Guarded by mu; POSTs in progress and receivers: 0 = idle.
	ending          bool           // Guarded by mu; no more POSTs or receivers are let in.
	posts           sync.WaitGroup // POSTs dispatching; Add only under mu while !ending.
}

// outStream is one SSE stream's queue.
type outStream struct {
	queue [][]byte      // Guarded by the transport's mu.
	held  bool          // Guarded by the transport's mu; a receiver holds the stream.
	wake  chan struct{} // capacity 1; the writer → the receiver: frames were queued
	over  chan struct{} // closed by EndStream (under mu): the receiver writes what is queued and finishes
}

func newOutStream() *outStream {
	return &outStream{wake: make(chan struct{}, 1), over: make(chan struct{})}
}

// route is where a response goes: the initialize POST's own answer, or a stream.
type route struct {
	session string // the session stream; "" = the connection's stream
	initial bool   // the answer of the initialize POST
}

// errTransportEnded fails a write once the connection's transport has been aborted.
var errTransportEnded = errors.New("the ACP connection ended")

func newTransport(s *Server, id, agent, owner string) *Transport {
	return &Transport{
		s: s, id: id, agent: agent, owner: owner, limit: s.cfg.QueueBytes,
		deleted: make(chan struct{}), ended: make(chan struct{}), dead: make(chan struct{}),
		activity: make(chan struct{}, 1), initial: make(chan []byte, 1),
		streams: map[string]*outStream{"": newOutStream()},
		routes:  map[string]route{},
	}
}

// idKey names a JSON-RPC id by value ("s:…" or "n:…"), however the client spelled it; "" when it is not a
// string or a number.
func idKey(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return "s:" + s
	}
	var n json.Number
	if json.Unmarshal(id, &n) == nil {
		return "n:" + n.String()
	}
	return ""
}

// expect records where the response to request id goes.
func (t *Transport) expect(id json.RawMessage, r route) {
	if k := idKey(id); k != "" {
		t.mu.Lock()
		t.routes[k] = r
		t.mu.Unlock()
	}
}

// takeRoute returns, and forgets, where the response frame goes.
func (t *Transport) takeRoute(frame []byte) route {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(frame, &m) // the gateway's own encoding
	k := idKey(m.ID)
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.routes[k]
	if !ok {
		return route{} // errors about unreadable requests (id null): the connection's stream
	}
	delete(t.routes, k)
	return r
}

func (t *Transport) Write(session string, frame []byte) error {
	if session == "" {
		r := t.takeRoute(frame)
		if r.initial {
			select {
			case t.initial <- frame:
			default: // a second answer to the same id: the POST has its first
			}
			return nil
		}
		session = r.session
	}
	t.mu.Lock()
	for t.buffered > 0 && t.buffered+int64(len(frame)) > t.limit {
		if t.room == nil {
			t.room = make(chan struct{})
		}
		room := t.room
		t.mu.Unlock()
		select {
		case <-room:
		case <-t.dead:
			return errTransportEnded
		}
		t.mu.Lock()
	}
	s := t.streams[session]
	if s == nil {
		s = newOutStream()
		t.streams[session] = s
	}
	s.queue = append(s.queue, frame)
	t.buffered += int64(len(frame))
	if t.endWhenAnswered[session] && !t.answersPendingLocked(session) {
		delete(t.endWhenAnswered, session)
		t.endStreamLocked(session) // its receiver writes what is queued, this answer included, then ends
	}
	t.mu.Unlock()
	notify(s.wake)
	return nil
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// take hands a receiver everything queued on s.
func (t *Transport) take(s *outStream) [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := s.queue
	s.queue = nil
	for _, f := range q {
		t.buffered -= int64(len(f))
	}
	if len(q) > 0 && t.room != nil {
		close(t.room)
		t.room = nil
	}
	return q
}

// acquire makes the caller the receiver of session's stream ("" = the connection's). ok=false: another
// receiver holds it; gone: the connection is ending.
func (t *Transport) acquire(session string) (s *outStream, ok, gone bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ending {
		return nil, false, true
	}
	s = t.streams[session]
	if s == nil {
		s = newOutStream()
		t.streams[session] = s
	}
	if s.held {
		return nil, false, false
	}
	s.held = true
	t.active++
	notify(t.activity)
	return s, true, false
}

// release ends a receiver's hold on s. A session stream with nothing queued is forgotten.
func (t *Transport) release(session string, s *outStream) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s.held = false
	t.active--
	notify(t.activity)
	if session != "" && len(s.queue) == 0 && t.streams[session] == s {
		delete(t.streams, session)
	}
}

// EndStream ends session's stream, if a receiver holds it: the connection was detached from the session
// because its principal lost it (a share ended), so nothing more will come on it. Its receiver writes what
// is queued and finishes; frames written after (an answer about the session) wait for a new GET.
func (t *Transport) EndStream(session string) {
	if session == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endStreamLocked(session)
}

func (t *Transport) endStreamLocked(session string) {
	s := t.streams[session]
	if s == nil || !s.held {
		return
	}
	close(s.over)
	t.streams[session] = newOutStream()
}

// EndClosedStream ends session's stream because the session closed: at once, or, while answers routed to
// that stream are pending (the client's own session/close among them), right after the last is queued, so
// the official client, which fails the requests in flight on a stream that ends, gets its answers first.
func (t *Transport) EndClosedStream(session string) {
	if session == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.answersPendingLocked(session) {
		if t.endWhenAnswered == nil {
			t.endWhenAnswered = map[string]bool{}
		}
		t.endWhenAnswered[session] = true
		return
	}
	t.endStreamLocked(session)
}

func (t *Transport) answersPendingLocked(session string) bool {
	for _, r := range t.routes {
		if !r.initial && r.session == session {
			return true
		}
	}
	return false
}

// enter admits a POST to dispatch; false once the connection is ending. Call leave after.
func (t *Transport) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ending {
		return false
	}
	t.posts.Add(1)
	t.active++
	notify(t.activity)
	return true
}

func (t *Transport) leave() {
	t.mu.Lock()
	t.active--
	notify(t.activity)
	t.mu.Unlock()
	t.posts.Done()
}

func (t *Transport) idle() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.active == 0
}

// delete is the client's DELETE (or its initialize POST gone before the answer).
func (t *Transport) delete() { t.deleteOnce.Do(func() { close(t.deleted) }) }

// Receive waits for the end of the client side: DELETE, Config.IdleTimeout with no POST and no stream, or
// ctx. Messages come in through the POSTs, which it lets finish before it returns.
func (t *Transport) Receive(ctx context.Context) error {
	idle := time.NewTimer(t.s.cfg.IdleTimeout)
	defer idle.Stop()
	var err error
wait:
	for {
		select {
		case <-ctx.Done():
			err = ctx.Err()
			break wait
		case <-t.deleted:
			break wait
		case <-t.activity:
			idle.Stop()
			if t.idle() {
				idle.Reset(t.s.cfg.IdleTimeout)
			}
		case <-idle.C:
			if t.idle() {
				t.s.cfg.Logger.Debug("acp: idle Streamable HTTP connection ended", "connection", t.id)
				break wait
			}
		}
	}
	t.mu.Lock()
	t.ending = true
	t.mu.Unlock()
	t.posts.Wait()
	return err
}

func (t *Transport) Ping(context.Context) error { return nil } // receivers send their own keep-alives

// End lets the receivers write what is queued and finish; new requests get 404.
func (t *Transport) End(error) {
	t.mu.Lock()
	t.ending = true
	t.mu.Unlock()
	t.s.conns.remove(t)
	t.endOnce.Do(func() { close(t.ended) })
}

func (t *Transport) Abort() { t.abortOnce.Do(func() { close(t.dead) }) }

// Batcher is nil: each stream writes and flushes its own SSE events as they come.
func (t *Transport) Batcher() frameout.Batcher { return nil }

// conns is the Server's connections by Acp-Connection-Id.
type conns struct {
	mu sync.Mutex
	by map[string]*Transport // Guarded by mu.
}

func (r *conns) add(t *Transport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[string]*Transport{}
	}
	r.by[t.id] = t
}

func (r *conns) get(id string) *Transport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.by[id]
}

func (r *conns) remove(t *Transport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by[t.id] == t {
		delete(r.by, t.id)
	}
}
