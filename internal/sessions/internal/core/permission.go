package core

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/google/uuid"
)

// The requests that wait for a user (package pending) are logged here, under mu, which guards the table.

// RequestPermission implements agents.Handler. It logs the request for clients, applies the session's policy,
// and waits for the first valid answer, the deadline, or the agent giving up.
func (s *Session) RequestPermission(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	req, perr := ask.ParsePermissionRequest(params)
	s.mu.Lock()
	params = agentlogin.ScrubParams(params, s.agent.Secrets) // what clients and the log get; req keeps the agent's option ids
	p := s.newRequestLocked()
	p.Req = req
	// Clients get the full tool call (title, kind, locations, diff) merged from what the agent sent before.
	clientParams, err := s.tctx.PermissionParams(params)
	if err != nil || perr != nil {
		s.mu.Unlock()
		s.logger.Warn("denying malformed permission request", "err", errors.Join(err, perr))
		return req.Deny("malformed permission request").MarshalResult(), nil
	}
	p.ToolCall = s.tctx.PermissionToolCall(req.ToolCall)
	return s.askLocked(ctx, p, clientParams)
}

// newRequestLocked starts a request of the running turn (if any), with its id and deadline.
func (s *Session) newRequestLocked() *pending.Request {
	createdAt := s.host.Now().UTC()
	turnID := ""
	if s.state.Turn != nil {
		turnID = s.state.Turn.ID
	}
	return pending.New(uuid.NewString(), turnID, createdAt, createdAt.Add(s.cfg.PermissionTimeout))
}

// askLocked logs p for clients, answers it at once when nobody may (no running turn) or the session's policy
// does (permissions only), and otherwise waits for the first valid answer, the deadline, or the agent giving
// up. It is called with mu held and releases it.
func (s *Session) askLocked(ctx context.Context, p *pending.Request, clientParams []byte) (json.RawMessage, error) {
	meta := translate.GatewayMeta{Epoch: s.Epoch, TurnID: p.TurnID, Deadline: p.Deadline.Format(time.RFC3339Nano)}
	if p.Elicit == nil {
		meta.PermissionID = p.ID
	}
	kind := eventlog.KindPermissionRequest
	if p.Elicit != nil {
		kind = eventlog.KindElicitationRequest
	}
	p.Seq, _ = s.log.Append(kind, func(seq uint64) ([]byte, error) {
		meta.Seq = seq
		return translate.AppendRequest(nil, p.ID, p.Method(), clientParams, meta)
	})
	p.Params, p.Meta = clientParams, meta
	var auto []pending.AnswerTo
	byPolicy := false
	switch {
	case s.state.Turn == nil || s.state.Turn.CancelRequested() || s.state.Status != store.StatusRunning:
		// Nobody can answer for a turn that is ending: ACP wants `cancelled` after session/cancel.
		auto = s.resolveLocked(p, p.Cancelled("turn not running"), "cancel")
	default:
		if o, ok := pending.ByPolicy(s.Policy, p.Req); ok && p.Elicit == nil {
			// The owner chose the policy when creating the session: the automatic answer is theirs.
			auto, byPolicy = s.resolveAsLocked(p, o, "policy", s.Owner), true
		} else {
			s.state.Perms.Add(p)
			s.state.Turn.NotifyAsked() // a waiting REST client returns: the user is needed
		}
	}
	s.mu.Unlock()
	pending.Deliver(auto)
	if byPolicy {
		s.audit(s.Owner, "permission_answer", "permission", p.ID, "by", "policy", "allowed", auto[0].Outcome().Allowed)
	}

	return p.Await(ctx, s.resolvePending)
}

// resolveLocked records an outcome: the request leaves the pending set, clients get
// `_gateway/permission_resolved`, and the returned answer must be delivered after unlocking.
func (s *Session) resolveLocked(p *pending.Request, o ask.Outcome, by string) []pending.AnswerTo {
	return s.resolveAsLocked(p, o, by, principal.Principal{})
}

// resolveAsLocked is resolveLocked naming who answered (actor), when a principal did.
func (s *Session) resolveAsLocked(p *pending.Request, o ask.Outcome, by string, who principal.Principal) []pending.AnswerTo {
	s.state.Perms.Resolve(p.ID)
	method, idKey := "_gateway/permission_resolved", "permissionId"
	if p.Elicit != nil {
		method, idKey = "_gateway/elicitation_resolved", "requestId"
	} else {
		s.cfg.Metrics.PermissionResolved(by, o.Allowed, s.host.Now().Sub(p.CreatedAt))
	}
	s.appendGatewayLocked(method, p.TurnID, withActor(map[string]any{idKey: p.ID, "outcome": o.ClientJSON(), "by": by}, who))
	return []pending.AnswerTo{pending.Answer(p, o)}
}

// resolvePending resolves a request if it is still pending; a lost race is not an error.
func (s *Session) resolvePending(id string, o ask.Outcome, by string) {
	s.mu.Lock()
	var as []pending.AnswerTo
	if p, ok := s.state.Perms.Get(id); ok {
		as = s.resolveLocked(p, o, by)
	}
	s.mu.Unlock()
	pending.Deliver(as)
}

// Answer applies a client's answer to a pending request. The first valid answer wins; an option the agent did
// not offer is ErrUnknownOption and leaves the request pending.
func (s *Session) Answer(permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, error) {
	o, _, err := s.answer(principal.Principal{}, permissionID, a, by)
	return o, err
}

// answer is Answer by who, also returning the running turn the request belonged to.
func (s *Session) answer(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *turns.Turn, error) {
	s.mu.Lock()
	p, err := s.state.Perms.Lookup(permissionID, a.For == "elicitation")
	var o ask.Outcome
	if err == nil {
		o, err = p.Decide(a)
	}
	if err != nil {
		s.mu.Unlock()
		return ask.Outcome{}, nil, err
	}
	var t *turns.Turn
	if s.state.Turn != nil && s.state.Turn.ID == p.TurnID {
		t = s.state.Turn
	}
	as := s.resolveAsLocked(p, o, by, who)
	s.mu.Unlock()
	pending.Deliver(as)
	if p.Elicit != nil {
		s.audit(who, "elicitation_answer", "elicitation", permissionID, "by", by, "action", o.Action)
	} else {
		s.audit(who, "permission_answer", "permission", permissionID, "by", by, "allowed", o.Allowed)
	}
	return o, t, nil
}

// denyPendingLocked denies pending requests (of one turn, or all when turnID is empty) the way the gateway
// denies on its own: the agent's reject option, else cancelled.
func (s *Session) denyPendingLocked(turnID, by, reason string) []pending.AnswerTo {
	var as []pending.AnswerTo
	for _, p := range s.state.Perms.List() {
		if turnID == "" || p.TurnID == turnID {
			as = append(as, s.resolveLocked(p, p.Deny(reason), by)...)
		}
	}
	return as
}

// cancelPendingLocked answers a turn's pending requests `cancelled`, as ACP requires after session/cancel.
func (s *Session) cancelPendingLocked(turnID string) []pending.AnswerTo {
	var as []pending.AnswerTo
	for _, p := range s.state.Perms.List() {
		if p.TurnID == turnID || p.TurnID == "" {
			as = append(as, s.resolveLocked(p, p.Cancelled("turn cancelled"), "cancel")...)
		}
	}
	return as
}

// PendingPermissions lists the pending requests.
func (s *Session) PendingPermissions() []pending.PermissionView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Perms.PermissionViews()
}

// PendingFrames returns the request frames of pending permissions and elicitations with seq <= upTo, for a client that resumes
// after them and would otherwise never see requests it still has to answer. Each is the logged frame with
// `_meta.gateway.resent: true`: it keeps its original seq, which is older than what the client has seen, so
// clients must not move their cursor on it. Entry.Seq is that original seq.
func (s *Session) PendingFrames(upTo uint64) []eventlog.Entry {
	s.mu.Lock()
	ps := s.state.Perms.UpTo(upTo)
	s.mu.Unlock()
	return pending.ResentFrames(ps)
}

// PermissionPending reports whether the permission request with this gateway id is still waiting for an
// answer. The `/acp` face forwards a logged `session/request_permission` frame to its client only while it
// is: an ACP client must not be asked about a request that a policy, another client or the gateway already
// decided.
func (s *Session) PermissionPending(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.state.Perms.Get(id)
	return ok
}
