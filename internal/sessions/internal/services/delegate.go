package services

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/acp-gateway/gateway/internal/principal"
	acp "github.com/coder/acp-go-sdk"
)

// An agent's fs/* and terminal/* requests are served by a delegate (an `/acp` client that advertised the
// capability) only while the delegate's principal may act on the session (owner, collaborator, admin): a
// viewer would otherwise answer the owner's agent with file contents and command output of its own choosing.
// The right is checked on every request, and a share that ends or drops to viewer takes back the requests
// the delegate holds at that moment (RevokeDelegateCalls): the next delegate, or the gateway, serves them
// again.

// FSDelegate serves an agent's fs/* requests for a session instead of the gateway: an ACP client attached over
// `/acp` that advertised fs capabilities (an editor with unsaved buffers knows better than the disk). Params
// carry the gateway's session id.
type FSDelegate interface {
	ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError)
	WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError)
}

// delegates are the session's offers to serve its tools and the requests they serve now, with their own lock
// (taken alone, never with the session's).
type delegates struct {
	mu    sync.Mutex
	list  []*fsDelegation        // Guarded by mu; who offers to serve fs/* and terminal/*, latest last.
	calls map[*delegateCall]bool // Guarded by mu; requests a delegate is serving now.
}

// fsDelegation is one registration of a delegate, with the principal whose connection it is.
type fsDelegation struct {
	who principal.Principal
	d   FSDelegate
}

// delegateCall is a request a delegate is serving now; cancel ends it when who may no longer act.
type delegateCall struct {
	who    principal.Principal
	cancel context.CancelCauseFunc
}

// errDelegateRevoked is why a delegate's request was taken back: its principal may no longer act.
var errDelegateRevoked = errors.New("the delegate's principal may no longer act on the session")

// maxDelegateTries bounds how often one request is handed on after delegates lost their right mid-request;
// then the gateway serves it.
const maxDelegateTries = 3

// AddFSDelegate puts d, a connection of who, on top of the session's delegates (an earlier offer of d moves
// there), until the release it returns takes this offer back.
func (sv *Services) AddFSDelegate(who principal.Principal, d FSDelegate) (release func()) {
	mine := &fsDelegation{who: who, d: d}
	ds := &sv.delegates
	ds.mu.Lock()
	ds.list = append(slices.DeleteFunc(ds.list, func(x *fsDelegation) bool { return x.d == d }), mine)
	ds.mu.Unlock()
	return func() {
		ds.mu.Lock()
		ds.list = slices.DeleteFunc(ds.list, func(x *fsDelegation) bool { return x == mine })
		ds.mu.Unlock()
	}
}

// delegate is the latest offer whose principal may act on the session now; nil when the gateway serves.
func (sv *Services) delegate() *fsDelegation {
	sv.delegates.mu.Lock()
	list := slices.Clone(sv.delegates.list)
	sv.delegates.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		if sv.s.MayServe(list[i].who) {
			return list[i]
		}
	}
	return nil
}

// serveDelegated serves one request through the current delegate (call reports false when the delegate does
// not serve this kind of request), else through local. An answer from a delegate whose principal lost the
// right while it held the request does not count: the request is served again.
func (sv *Services) serveDelegated(ctx context.Context, call func(context.Context, FSDelegate) (any, *acp.RequestError, bool), local func() (any, *acp.RequestError)) (any, *acp.RequestError) {
	for range maxDelegateTries {
		dl := sv.delegate()
		if dl == nil {
			break
		}
		cctx, c := sv.trackDelegateCall(ctx, dl.who)
		res, rerr, served := call(cctx, dl.d)
		revoked := errors.Is(context.Cause(cctx), errDelegateRevoked)
		sv.untrackDelegateCall(c)
		if !served {
			break
		}
		if !revoked && sv.s.MayServe(dl.who) {
			return res, rerr
		}
		sv.logger.Info("a delegate lost the right to serve the session's tools; the request is served again", "principal", dl.who.ID)
	}
	return local()
}

func (sv *Services) trackDelegateCall(ctx context.Context, who principal.Principal) (context.Context, *delegateCall) {
	cctx, cancel := context.WithCancelCause(ctx)
	c := &delegateCall{who: who, cancel: cancel}
	sv.delegates.mu.Lock()
	if sv.delegates.calls == nil {
		sv.delegates.calls = map[*delegateCall]bool{}
	}
	sv.delegates.calls[c] = true
	sv.delegates.mu.Unlock()
	return cctx, c
}

func (sv *Services) untrackDelegateCall(c *delegateCall) {
	sv.delegates.mu.Lock()
	delete(sv.delegates.calls, c)
	sv.delegates.mu.Unlock()
	c.cancel(nil)
}

// RevokeDelegateCalls takes back the requests held by delegates whose principal may no longer act (a share
// ended or became viewer): each is served again at once (serveDelegated), and the delegate is told it was
// withdrawn.
func (sv *Services) RevokeDelegateCalls() {
	sv.delegates.mu.Lock()
	calls := make([]*delegateCall, 0, len(sv.delegates.calls))
	for c := range sv.delegates.calls {
		calls = append(calls, c)
	}
	sv.delegates.mu.Unlock()
	for _, c := range calls {
		if !sv.s.MayServe(c.who) {
			c.cancel(errDelegateRevoked)
		}
	}
}
