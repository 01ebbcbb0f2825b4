package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/telemetry"
)

// ErrCommandTooLarge is a command (or a reply) bigger than the NATS connection's max payload.
var ErrCommandTooLarge = errors.New("jsstore: routed command exceeds the NATS max payload")

// Call sends cmd to node's command subject (core request/reply) and waits at most cmd.Timeout() for the reply.
// An error the owner's handler returned comes back in the reply (Reply.Error), not as Call's error.
func (c *Cluster) Call(ctx context.Context, node string, cmd store.Command) (store.Reply, error) {
	if !nodePattern.MatchString(node) {
		return store.Reply{}, fmt.Errorf("%w: %q", ErrBadNodeID, node)
	}
	data, err := json.Marshal(cmd)
	if err != nil {
		return store.Reply{}, fmt.Errorf("jsstore: command %s: %w", cmd.Op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, cmd.Timeout())
	defer cancel()
	subject := c.st.opts.commandSubject(node)
	req := &nats.Msg{Subject: subject, Data: data}
	if c.tooLarge(data) {
		if req, err = c.stash(ctx, subject, data); err != nil {
			return store.Reply{}, fmt.Errorf("%w: %s of %d bytes: %v", ErrCommandTooLarge, cmd.Op, len(data), err)
		}
	}
	telemetry.InjectNATS(ctx, req) // the owner's spans (a routed prompt's turn) continue the caller's trace
	msg, err := c.request(ctx, node, req)
	switch {
	case errors.Is(err, nats.ErrNoResponders) && c.live(node):
		return store.Reply{}, fmt.Errorf("%w: node %q beats but nothing listened for its commands on this NATS server before the call ended", store.ErrOwnerUnavailable, node)
	case errors.Is(err, nats.ErrNoResponders):
		return store.Reply{}, fmt.Errorf("%w: no gateway answers for node %q", store.ErrOwnerUnavailable, node)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return store.Reply{}, fmt.Errorf("%w: node %q, %s after %s", store.ErrOwnerTimeout, node, cmd.Op, cmd.Timeout())
	case err != nil:
		return store.Reply{}, fmt.Errorf("jsstore: command %s to node %q: %w", cmd.Op, node, err)
	}
	body, err := c.body(ctx, msg)
	if err != nil {
		return store.Reply{}, fmt.Errorf("jsstore: reply to %s from node %q: %w", cmd.Op, node, err)
	}
	var reply store.Reply
	if err := json.Unmarshal(body, &reply); err != nil {
		return store.Reply{}, fmt.Errorf("jsstore: reply to %s from node %q: %w", cmd.Op, node, err)
	}
	return reply, nil
}

// Bounds of the pause between requests to a live node whose command subject had no listener.
const (
	noListenerRetryMin = 20 * time.Millisecond
	noListenerRetryMax = 500 * time.Millisecond
)

// request sends req and waits for the reply. A live node whose subject has no listener on this NATS server
// yet (its subscription still on its way between servers) is asked again: nobody received the command, so
// sending it again cannot run it twice. Each such retry counts in CallRetries.
func (c *Cluster) request(ctx context.Context, node string, req *nats.Msg) (*nats.Msg, error) {
	wait := noListenerRetryMin
	for {
		msg, err := c.conn().RequestMsgWithContext(ctx, req)
		if !errors.Is(err, nats.ErrNoResponders) || !c.live(node) {
			return msg, err
		}
		c.callRetries.Add(1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, noListenerRetryMax)
	}
}

// live reports whether node beats in the cluster, as this node last saw it.
func (c *Cluster) live(node string) bool {
	for _, n := range c.Nodes() {
		if n.ID == node {
			return true
		}
	}
	return false
}

// CallRetries is how many commands were sent again because a live node had no listener yet.
func (c *Cluster) CallRetries() uint64 { return c.callRetries.Load() }

// Serve subscribes this node's command subject and answers each command with h on its own goroutine, at most
// MaxConcurrentCommands at once (more wait in the subscription's queue). It returns once the server has the
// subscription; serving ends when ctx ends or the cluster closes, and Close waits for running handlers.
func (c *Cluster) Serve(ctx context.Context, h store.CommandHandler) error {
	sem := make(chan struct{}, c.opts.MaxConcurrentCommands)
	serveCtx, cancel := context.WithCancel(ctx)
	stopOnClose := context.AfterFunc(c.ctx, cancel)
	var (
		mu       sync.Mutex
		stopped  bool           // Guarded by mu: no handler starts once set.
		handlers sync.WaitGroup // Handlers started while !stopped.
	)
	sub, err := c.conn().Subscribe(c.st.opts.commandSubject(c.opts.Node), func(m *nats.Msg) {
		select { // back-pressure: the subscription callback waits for a free slot
		case sem <- struct{}{}:
		case <-serveCtx.Done():
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			<-sem
			return
		}
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			defer func() { <-sem }()
			c.handle(serveCtx, h, m)
		}()
	})
	if err == nil {
		// The flush needs a deadline of its own: a Serve for the life of the process has none.
		fctx, fcancel := context.WithTimeout(ctx, connectTimeout)
		err = c.conn().FlushWithContext(fctx)
		fcancel()
	}
	if err != nil {
		stopOnClose()
		cancel()
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		return fmt.Errorf("jsstore: serve commands of %s: %w", c.opts.Node, err)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		<-serveCtx.Done()
		stopOnClose()
		_ = sub.Unsubscribe()
		mu.Lock()
		stopped = true
		mu.Unlock()
		handlers.Wait()
	}()
	return nil
}

// handle runs one command and sends its reply; a reply over the max payload is replaced by an error reply.
func (c *Cluster) handle(ctx context.Context, h store.CommandHandler, m *nats.Msg) {
	var cmd store.Command
	var reply store.Reply
	data, err := c.body(ctx, m)
	if err == nil {
		err = json.Unmarshal(data, &cmd)
	}
	if err != nil {
		reply = store.ErrorReply(0, store.CodeBadRequest, "bad request: command: "+err.Error())
	} else {
		hctx, cancel := cmd.HandlerContext(telemetry.ExtractNATS(ctx, m))
		c.running.Add(1)
		reply = h(hctx, cmd)
		c.running.Add(-1)
		cancel()
	}
	data, err = json.Marshal(reply)
	if err != nil {
		data, _ = json.Marshal(store.ErrorReply(reply.Head, store.CodeInternal, err.Error()))
	}
	if c.tooLarge(data) && m.Reply != "" {
		out, serr := c.stash(ctx, m.Reply, data)
		if serr == nil {
			_ = m.RespondMsg(out)
			return
		}
		data, _ = json.Marshal(store.ErrorReply(reply.Head, store.CodeInternal, fmt.Sprintf("%v: the reply to %s is %d bytes: %v", ErrCommandTooLarge, cmd.Op, len(data), serr)))
	}
	_ = m.Respond(data)
}
