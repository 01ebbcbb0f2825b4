package acpws

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/coder/websocket"
)

// op is one step the writer runs on its own goroutine, in queue order: write a response, attach a session,
// replay a log. An error ends the connection.
type op func(w *writer) error

// conn is one `/acp` socket.
type conn struct {
	// Static after construction.
	h        *Handler
	ws       *websocket.Conn
	agent    string        // agent of sessions made with session/new
	out      chan op       // reader and request goroutines → writer; bounded
	inflight chan struct{} // request budget (semaphore)
	ctx      context.Context
	cancel   context.CancelFunc
	work     sync.WaitGroup // request goroutines and pings; joined before the handler returns

	mu       sync.Mutex
	attached map[string]*subscription // Guarded by mu; sessions whose frames this socket forwards.
	lastAtt  *sessions.Session        // Guarded by mu; most recently attached (authenticate goes there).
	ownTurns map[string]struct{}      // Guarded by mu; running turns this socket prompted.
	answered map[string]struct{}      // Guarded by mu; permission ids this socket answered (bounded).
	fs       fsCaps                   // Guarded by mu; what the client advertised in initialize.
	calls    map[uint64]*clientCall   // Guarded by mu; requests sent to the client (fs/*), by the id minted.
	nextCall uint64                   // Guarded by mu; the last id minted.
}

// subscription is this socket counted as one of a session's subscribers (its client cap, the idle reaper).
type subscription struct {
	s      *sessions.Session
	detach func()      // from Session.Attach; called once, by unsubscribe
	fsd    *fsDelegate // registered with fsOwners while this socket serves the session's fs/*; else nil
}

func newConn(h *Handler, c *websocket.Conn, agent string) *conn {
	return &conn{
		h: h, ws: c, agent: agent,
		out:      make(chan op, h.opts.OutQueue),
		inflight: make(chan struct{}, h.opts.MaxInflight),
		attached: map[string]*subscription{},
		ownTurns: map[string]struct{}{},
		answered: map[string]struct{}{},
		calls:    map[uint64]*clientCall{},
	}
}

// closeErr carries the close code the connection ends with.
type closeErr struct {
	code   websocket.StatusCode
	reason string
}

func (e *closeErr) Error() string { return e.reason }

// run starts the reader, runs the writer on this goroutine, and returns when both and every request
// goroutine have ended. Sessions and their turns live on.
func (c *conn) run(parent context.Context) {
	c.ctx, c.cancel = context.WithCancel(parent)
	defer c.cancel()
	readDone := make(chan struct{}) // closed when the reader has ended; readErr is then set
	var readErr error
	go func() {
		defer close(readDone)
		readErr = c.readLoop(c.ctx)
	}()

	w := &writer{c: c, atts: map[string]*attachment{}}
	err := w.loop(c.ctx, readDone, &readErr)
	c.releaseAllFS() // the gateway serves fs/* again at once; requests sent to this client fail below
	var ce *closeErr
	if errors.As(err, &ce) {
		c.ws.Close(ce.code, ce.reason)
	} else {
		c.ws.CloseNow()
	}
	c.cancel()
	<-readDone
	c.work.Wait()
	c.mu.Lock()
	for id, sub := range c.attached {
		delete(c.attached, id)
		c.releaseFSLocked(sub)
		sub.detach()
	}
	c.mu.Unlock()
}

// send queues an op for the writer; false when the connection is gone.
func (c *conn) send(o op) bool {
	select {
	case c.out <- o:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// reply queues a frame that concerns no session.
func (c *conn) reply(frame []byte) {
	c.send(func(w *writer) error { return w.write(frame) })
}

// replyAfterLog queues a response about s: it is written once this socket has forwarded s's log up to its
// current head, so the client sees every update the answer depends on before the answer.
func (c *conn) replyAfterLog(s *sessions.Session, frame []byte) {
	_, head := s.Log().Bounds()
	c.send(func(w *writer) error {
		if a := w.atts[s.ID]; a != nil && a.s == s {
			if err := w.flush(a, head); err != nil {
				return err
			}
		}
		return w.write(frame)
	})
}

// attachedSession returns the session id if this socket attached to it.
func (c *conn) attachedSession(id string) *sessions.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sub := c.attached[id]; sub != nil {
		return sub.s
	}
	return nil
}

// errTooManyClients is a session at its subscriber cap (sessions.Config.MaxClients).
var errTooManyClients = errors.New("the session is at its client limit")

// subscribe counts this socket as a subscriber of s (once, however often it attaches) and, when the client
// advertised fs, makes it the delegate of s's fs/* requests (again at every attach: the latest wins).
func (c *conn) subscribe(s *sessions.Session) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := c.attached[s.ID]
	if sub == nil || sub.s != s {
		detach, ok := s.Attach()
		if !ok {
			return errTooManyClients
		}
		if sub != nil {
			c.releaseFSLocked(sub)
		}
		sub = &subscription{s: s, detach: detach}
		c.attached[s.ID] = sub
	}
	c.lastAtt = s
	c.delegateFSLocked(sub)
	return nil
}

// unsubscribe ends the subscription to s (its log closed).
func (c *conn) unsubscribe(s *sessions.Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sub := c.attached[s.ID]; sub != nil && sub.s == s {
		delete(c.attached, s.ID)
		c.releaseFSLocked(sub)
		sub.detach()
	}
	if c.lastAtt == s {
		c.lastAtt = nil
	}
}

func (c *conn) attachedList() []*sessions.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*sessions.Session, 0, len(c.attached))
	for _, sub := range c.attached {
		out = append(out, sub.s)
	}
	return out
}

func (c *conn) isOwnTurn(turnID string) bool {
	if turnID == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.ownTurns[turnID]
	return ok
}

// noteAnswered records that this socket answered permission id, so the writer does not withdraw it.
func (c *conn) noteAnswered(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answered) >= 1024 {
		clear(c.answered) // only a client answering requests it was never sent gets here
	}
	c.answered[id] = struct{}{}
}

// takeAnswered reports whether this socket answered permission id, and forgets it.
func (c *conn) takeAnswered(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.answered[id]
	delete(c.answered, id)
	return ok
}

// attachment is the writer's view of one attached session. Owned by the writer.
type attachment struct {
	s           *sessions.Session
	cursor      uint64              // seq of the last frame handled (forwarded or skipped)
	replayUntil uint64              // frames up to this seq are history: no permission requests, no lag count
	wake        <-chan struct{}     // from the last read; closed when the log has more
	closed      bool                // the log is closed and fully read
	asked       map[string]struct{} // permission ids sent to the client and not yet resolved
}

// writer is the connection's only writer of data frames.
type writer struct {
	c    *conn
	atts map[string]*attachment // Owned by the writer.
	buf  []sessions.Entry
}

// attach starts forwarding s's log after seq from; frames up to replayUntil are history. Re-attaching
// replaces the cursor.
func (w *writer) attach(s *sessions.Session, from, replayUntil uint64) *attachment {
	a := &attachment{s: s, cursor: from, replayUntil: replayUntil, asked: map[string]struct{}{}}
	if old := w.atts[s.ID]; old != nil && old.s == s {
		a.asked = old.asked // still asked: a re-load re-sends only what is pending
	}
	w.atts[s.ID] = a
	return a
}

func (w *writer) detach(a *attachment) {
	if w.atts[a.s.ID] == a {
		delete(w.atts, a.s.ID)
	}
	w.c.unsubscribe(a.s)
}

func (w *writer) loop(ctx context.Context, readDone <-chan struct{}, readErr *error) error {
	c := w.c
	ping := time.NewTicker(c.h.opts.PingInterval)
	defer ping.Stop()
	var cases []reflect.SelectCase
	for {
		busy := false
		for _, a := range w.atts {
			n, err := w.pump(a, 0)
			if err != nil {
				return err
			}
			if n > 0 {
				busy = true
			}
			if a.closed {
				w.detach(a)
			}
		}
		if busy {
			// Interleave queued responses with a long log so neither starves, and notice an ending socket.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-readDone:
				return readErrToClose(*readErr)
			case <-c.h.shutdown:
				return &closeErr{codeGoingAway, reasonShutdown}
			case o := <-c.out:
				if err := o(w); err != nil {
					return err
				}
			default:
			}
			continue
		}
		const (
			iCtx = iota
			iRead
			iShutdown
			iPing
			iOut
			iFirstLog
		)
		cases = append(cases[:0],
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(readDone)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.h.shutdown)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ping.C)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.out)},
		)
		for _, a := range w.atts {
			if a.wake != nil {
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(a.wake)})
			}
		}
		chosen, v, _ := reflect.Select(cases)
		switch chosen {
		case iCtx:
			return ctx.Err()
		case iRead:
			return readErrToClose(*readErr)
		case iShutdown:
			return &closeErr{codeGoingAway, reasonShutdown}
		case iPing:
			c.work.Add(1)
			go func() {
				defer c.work.Done()
				pctx, cancel := context.WithTimeout(ctx, c.h.opts.WriteTimeout)
				defer cancel()
				if err := c.ws.Ping(pctx); err != nil && ctx.Err() == nil {
					c.ws.CloseNow() // missed pong: the reader fails and the writer follows
				}
			}()
		case iOut:
			if err := v.Interface().(op)(w); err != nil {
				return err
			}
		default:
			// A log woke up: the next round pumps it.
		}
	}
}

// pump reads the next batch of a's log (up to seq limit when limit > 0) and forwards what this socket
// forwards. It returns how many frames it handled.
func (w *writer) pump(a *attachment, limit uint64) (int, error) {
	if a.closed {
		return 0, nil
	}
	log := a.s.Log()
	res, err := log.Read(a.cursor, 256, w.buf)
	if errors.Is(err, sessions.ErrTruncated) {
		if a.cursor < a.replayUntil {
			// Replaying history the log no longer holds entirely: start at its oldest frame.
			first, _ := log.Bounds()
			a.cursor = first - 1
			res, err = log.Read(a.cursor, 256, w.buf)
		}
		if err != nil {
			return 0, &closeErr{codeSlowClient, reasonTruncated}
		}
	}
	w.buf = res.Entries
	a.wake = res.Wake
	n, handled := 0, int64(0)
	for _, e := range res.Entries {
		if limit > 0 && e.Seq > limit {
			break
		}
		if err := w.forward(a, e); err != nil {
			return n, err
		}
		a.cursor = e.Seq
		n++
		handled += int64(len(e.Frame))
	}
	if len(res.Entries) == 0 && res.Closed {
		a.closed = true
		return 0, nil
	}
	if a.cursor >= a.replayUntil && res.Head > a.cursor {
		o := w.c.h.opts
		if res.Head-a.cursor > uint64(o.QueueFrames) || res.LagBytes-handled > o.QueueBytes {
			return n, &closeErr{codeSlowClient, reasonSlow}
		}
	}
	return n, nil
}

// flush forwards a's log up to seq upTo.
func (w *writer) flush(a *attachment, upTo uint64) error {
	for a.cursor < upTo && !a.closed {
		n, err := w.pump(a, upTo)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}

// logFrame is the part of a logged frame the writer looks at to decide whether to forward it.
type logFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
		} `json:"update"`
		PermissionID string `json:"permissionId"` // _gateway/permission_resolved
		Meta         struct {
			Gateway struct {
				TurnID string `json:"turnId"`
			} `json:"gateway"`
		} `json:"_meta"`
	} `json:"params"`
}

// forward writes one log frame if this socket forwards it.
func (w *writer) forward(a *attachment, e sessions.Entry) error {
	var f logFrame
	if err := json.Unmarshal(e.Frame, &f); err != nil {
		return nil // the log only holds frames the gateway encoded; never expected
	}
	switch f.Method {
	case "session/update":
		if f.Params.Update.SessionUpdate == "user_message_chunk" && e.Seq > a.replayUntil && w.c.isOwnTurn(f.Params.Meta.Gateway.TurnID) {
			return nil // the prompt's sender knows what it sent
		}
		return w.write(e.Frame)
	case "session/request_permission":
		if e.Seq <= a.replayUntil {
			return nil // history; still-pending ones are re-sent after the attach
		}
		var id string
		if json.Unmarshal(f.ID, &id) != nil || !a.s.PermissionPending(id) {
			return nil
		}
		return w.ask(a, id, e.Frame)
	case "_gateway/permission_resolved":
		// Resolved by someone else (REST, another socket, the gateway on cancel/close/deadline): withdraw the
		// request from this client with ACP's `$/cancel_request`, so its UI stops asking. Its late answer, if
		// any, is ignored.
		id := f.Params.PermissionID
		if _, ok := a.asked[id]; !ok {
			return nil
		}
		delete(a.asked, id)
		if w.c.takeAnswered(id) {
			return nil
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "$/cancel_request", "params": map[string]any{"requestId": id}})
		return w.write(b)
	}
	return nil // other `_gateway/*` frames: not ACP
}

// ask sends a permission request frame to the client and remembers it until it is resolved.
func (w *writer) ask(a *attachment, id string, frame []byte) error {
	if _, dup := a.asked[id]; dup {
		return nil
	}
	a.asked[id] = struct{}{}
	return w.write(frame)
}

// sendPending writes the request frames of a's permissions still pending and logged at or before upTo.
func (w *writer) sendPending(a *attachment, upTo uint64) error {
	for _, e := range a.s.PendingFrames(upTo) {
		var f struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(e.Frame, &f) != nil {
			continue
		}
		if err := w.ask(a, f.ID, e.Frame); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) write(frame []byte) error {
	ctx, cancel := context.WithTimeout(w.c.ctx, w.c.h.opts.WriteTimeout)
	defer cancel()
	return w.c.ws.Write(ctx, websocket.MessageText, frame)
}

func readErrToClose(err error) error {
	var ce *closeErr
	if errors.As(err, &ce) {
		return ce
	}
	return err
}
