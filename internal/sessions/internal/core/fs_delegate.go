package core

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/acp-gateway/gateway/internal/principal"
	acp "github.com/coder/acp-go-sdk"
)

// An agent's fs/* and terminal/* requests are served by a delegate (an `/acp` client that advertised the
// capability) only while the delegate's principal may act on the session (owner, collaborator, admin): a
// viewer would otherwise answer the owner's agent with file contents and command output of its own choosing.
// The right is checked on every request, and a share that ends or drops to viewer takes back the requests
// the delegate holds at that moment (sharesChanged): the next delegate, or the gateway, serves them again.

// FSDelegate serves an agent's fs/* requests for a session instead of the gateway: an ACP client attached over
// `/acp` that advertised fs capabilities (an editor with unsaved buffers knows better than the disk). Params
// carry the gateway's session id.
type FSDelegate interface {
	ReadTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError)
	WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError)
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

// DelegateFS offers d, a connection of who, to serve the session's fs/* (and terminal/*, for a
// TerminalDelegate) until release. The latest offer whose principal may act on the session serves; offering
// d again moves it to the top. Requests no delegate may serve are served by the gateway itself, confined to
// the cwd. A follower offers nothing: the owner's node serves its agent.
func (s *Session) DelegateFS(who principal.Principal, d FSDelegate) (release func()) {
	return s.run.DelegateFS(who, d)
}

// mayServe reports whether who may serve the session's tools: nobody (the gateway's own code) or a
// principal allowed to act on it.
func (s *Session) mayServe(who principal.Principal) bool {
	return who.IsZero() || s.AccessOf(who) >= AccessAct
}

// delegate is the latest offer whose principal may act on the session now; nil when the gateway serves.
func (s *Session) delegate() *fsDelegation {
	s.mu.Lock()
	list := slices.Clone(s.fsDelegates)
	s.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		if s.mayServe(list[i].who) { // AccessOf takes shares.mu, never with mu held
			return list[i]
		}
	}
	return nil
}

// serveDelegated serves one request through the current delegate (call reports false when the delegate does
// not serve this kind of request), else through local. An answer from a delegate whose principal lost the
// right while it held the request does not count: the request is served again.
func (s *Session) serveDelegated(ctx context.Context, call func(context.Context, FSDelegate) (any, *acp.RequestError, bool), local func() (any, *acp.RequestError)) (any, *acp.RequestError) {
	for range maxDelegateTries {
		dl := s.delegate()
		if dl == nil {
			break
		}
		cctx, c := s.trackDelegateCall(ctx, dl.who)
		res, rerr, served := call(cctx, dl.d)
		revoked := errors.Is(context.Cause(cctx), errDelegateRevoked)
		s.untrackDelegateCall(c)
		if !served {
			break
		}
		if !revoked && s.mayServe(dl.who) {
			return res, rerr
		}
		s.logger.Info("a delegate lost the right to serve the session's tools; the request is served again", "principal", dl.who.ID)
	}
	return local()
}

func (s *Session) trackDelegateCall(ctx context.Context, who principal.Principal) (context.Context, *delegateCall) {
	cctx, cancel := context.WithCancelCause(ctx)
	c := &delegateCall{who: who, cancel: cancel}
	s.mu.Lock()
	if s.delegateCalls == nil {
		s.delegateCalls = map[*delegateCall]bool{}
	}
	s.delegateCalls[c] = true
	s.mu.Unlock()
	return cctx, c
}

func (s *Session) untrackDelegateCall(c *delegateCall) {
	s.mu.Lock()
	delete(s.delegateCalls, c)
	s.mu.Unlock()
	c.cancel(nil)
}

// revokeDelegateCalls takes back the requests held by delegates whose principal may no longer act (a share
// ended or became viewer): each is served again at once (serveDelegated), and the delegate is told it was
// withdrawn.
func (s *Session) revokeDelegateCalls() {
	s.mu.Lock()
	calls := make([]*delegateCall, 0, len(s.delegateCalls))
	for c := range s.delegateCalls {
		calls = append(calls, c)
	}
	s.mu.Unlock()
	for _, c := range calls {
		if !s.mayServe(c.who) {
			c.cancel(errDelegateRevoked)
		}
	}
}
