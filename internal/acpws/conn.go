package acpws

import (
	"context"
	"errors"
	"sync"

	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions"
)

// op is one step the writer runs on its own goroutine, in queue order: write a response, attach a session,
// replay a log. An error ends the connection.
type op func(w *writer) error

// conn is one `/acp` socket.
type conn struct {
	// Static after construction.
	h        *Handler
	t        transport
	agent    string          // agent of sessions made with session/new
	revoked  <-chan struct{} // closed when the caller's credentials are revoked: the connection ends with 1008
	out      chan op         // reader and request goroutines → writer; bounded
	inflight chan struct{}   // request budget (semaphore)
	ctx      context.Context
	cancel   context.CancelFunc
	work     sync.WaitGroup // request goroutines and pings; joined before the handler returns

	mu       sync.Mutex
	attached map[string]*subscription  // Guarded by mu; sessions whose frames this socket forwards.
	lastAtt  *sessions.Session         // Guarded by mu; most recently attached (authenticate goes there).
	ownTurns map[string]struct{}       // Guarded by mu; running turns this socket prompted.
	answered map[string]struct{}       // Guarded by mu; permission ids this socket answered (bounded).
	fs       fsCaps                    // Guarded by mu; what the client advertised in initialize.
	terminal bool                      // Guarded by mu; the client advertised clientCapabilities.terminal.
	elicit   elicitationCaps           // Guarded by mu; the elicitation modes the client advertised.
	calls    map[uint64]*clientCall    // Guarded by mu; requests sent to the client (fs/*), by the id minted.
	nextCall uint64                    // Guarded by mu; the last id minted.
	requests map[string]*clientRequest // Guarded by mu; the client's requests in progress, by id (cancelreq.go).
}

// subscription is this socket counted as one of a session's subscribers (its client cap, the idle reaper).
type subscription struct {
	s   *sessions.Session
	sub *sessions.Subscriber // from Session.AttachAs; detached once, by unsubscribe
	fsd *fsDelegate          // offered to the session (Session.DelegateFS) while the client serves fs/*; else nil
}

// newConn makes a connection over t that lives until parent ends or run returns.
func newConn(parent context.Context, h *Handler, t transport, agent string) *conn {
	ctx, cancel := context.WithCancel(parent)
	return &conn{
		h: h, t: t, agent: agent, ctx: ctx, cancel: cancel, revoked: principal.Revoked(parent),
		out:      make(chan op, h.opts.OutQueue),
		inflight: make(chan struct{}, h.opts.MaxInflight),
		attached: map[string]*subscription{},
		ownTurns: map[string]struct{}{},
		answered: map[string]struct{}{},
		calls:    map[uint64]*clientCall{},
	}
}

// closeErr carries the close code the connection ends with.
type closeErr = frameout.CloseError

// Run starts the receiver, runs the writer on this goroutine, and returns when both and every request
// goroutine have ended. Sessions and their turns live on.
func (c *conn) Run() {
	defer c.cancel()
	readDone := make(chan struct{}) // closed when the reader has ended; readErr is then set
	var readErr error
	go func() {
		defer close(readDone)
		readErr = c.t.Receive(c.ctx)
	}()

	w := &writer{c: c, atts: map[string]*attachment{}, woke: make(chan struct{}, 1)}
	w.out = frameout.Start(c.ctx, c.h.opts.WriteTimeout, c.h.face, c.t.Abort)
	if b := c.t.Batcher(); b != nil {
		w.out.Batch(b)
	}
	err := w.loop(c.ctx, readDone, &readErr)
	_ = w.out.Flush() // held frames go out before the close frame (a failed flush fails the close too)
	w.out.Stop()
	w.endAll()
	c.releaseAllFS() // the gateway serves fs/* again at once; requests sent to this client fail below
	var ce *closeErr
	if errors.As(err, &ce) && ce.Code == codeSlowClient { // too far behind, or the log trimmed under it
		c.h.face.Evicted()
	}
	c.t.End(err)
	c.cancel()
	<-readDone
	c.work.Wait()
	c.mu.Lock()
	for id, sub := range c.attached {
		delete(c.attached, id)
		c.releaseFSLocked(sub)
		sub.sub.Detach()
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

// hasOwnTurns reports whether a turn this socket prompted still awaits its answer.
func (c *conn) hasOwnTurns() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ownTurns) > 0
}

// AttachedSession returns the session id if this socket attached to it and its principal may still see it
// (a share that just ended detaches it: dropWhenLost).
func (c *conn) AttachedSession(id string) *sessions.Session {
	c.mu.Lock()
	sub := c.attached[id]
	c.mu.Unlock()
	if sub == nil || !sub.s.VisibleTo(principal.From(c.ctx)) {
		return nil
	}
	return sub.s
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
		att, ok := s.AttachAs(principal.From(c.ctx))
		if !ok {
			return errTooManyClients
		}
		if sub != nil {
			c.releaseFSLocked(sub)
		}
		sub = &subscription{s: s, sub: att}
		c.attached[s.ID] = sub
		c.dropWhenLost(att)
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
		sub.sub.Detach()
	}
	if c.lastAtt == s {
		c.lastAtt = nil
	}
}

// dropWhenLost detaches this socket from att's session when its principal may no longer see it (a share
// ended): the writer stops forwarding its log, fs/* goes back to the gateway, the session's own stream
// (Streamable HTTP) ends, and calls naming it answer -32002 as for a session that does not exist.
func (c *conn) dropWhenLost(att *sessions.Subscriber) {
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		select {
		case <-att.Lost():
		case <-att.Detached():
			return
		case <-c.ctx.Done():
			return
		}
		s := att.Session()
		c.send(func(w *writer) error {
			c.mu.Lock()
			cur := c.attached[s.ID]
			c.mu.Unlock()
			if cur == nil || cur.sub != att {
				return nil // already detached (and perhaps attached again since)
			}
			if a := w.atts[s.ID]; a != nil && a.s == s {
				w.detach(a)
			} else {
				c.unsubscribe(s)
			}
			c.t.EndStream(s.ID)
			return nil
		})
	}()
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
