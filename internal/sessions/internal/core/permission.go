package core

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/google/uuid"
)

// permission is one pending request the gateway put to users for its agent, waiting for its first valid
// answer: a `session/request_permission`, or (elicit set) an `elicitation/create`. Both share one life:
// logged, listed, answered by any face, resolved by the gateway on cancel, close, deadline and agent exit.
type permission struct {
	// Static after construction.
	id        string
	turnID    string
	req       ask.PermissionRequest
	elicit    *ask.ElicitationRequest // set for an elicitation
	createdAt time.Time
	deadline  time.Time
	toolCall  json.RawMessage       // the request's tool call merged over what the agent sent before
	params    []byte                // the request's params as clients see them
	meta      translate.GatewayMeta // the logged frame's stamp, seq included
	seq       uint64                // its seq
	answer    chan ask.Outcome      // buffered 1; written once by whoever resolves it
}

// PermissionView is a pending permission request as clients see it.
type PermissionView struct {
	ID        string                 `json:"id"`
	TurnID    string                 `json:"turnId,omitempty"`
	ToolCall  json.RawMessage        `json:"toolCall"`
	Options   []ask.PermissionOption `json:"options"`
	CreatedAt time.Time              `json:"createdAt"`
	Deadline  time.Time              `json:"deadline"`
}

// AnswerTo pairs a resolved request with the outcome to deliver to the waiting agent handler.
type AnswerTo struct {
	p *permission
	o ask.Outcome
}

// Deliver hands outcomes to the agent handlers waiting for them. Channels are buffered: never blocks.
func Deliver(as []AnswerTo) {
	for _, a := range as {
		a.p.answer <- a.o
	}
}

// RequestPermission implements agents.Handler. It logs the request for clients, applies the session's policy,
// and waits for the first valid answer, the deadline, or the agent giving up.
func (s *Session) RequestPermission(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	req, perr := ask.ParsePermissionRequest(params)
	s.mu.Lock()
	params = agentlogin.ScrubParams(params, s.loginSecrets) // what clients and the log get; req keeps the agent's option ids
	p := s.newRequestLocked()
	p.req = req
	// Clients get the full tool call (title, kind, locations, diff) merged from what the agent sent before.
	clientParams, err := s.tctx.PermissionParams(params)
	if err != nil || perr != nil {
		s.mu.Unlock()
		s.logger.Warn("denying malformed permission request", "err", errors.Join(err, perr))
		return req.Deny("malformed permission request").MarshalResult(), nil
	}
	p.toolCall = s.tctx.PermissionToolCall(req.ToolCall)
	return s.askLocked(ctx, p, clientParams)
}

// newRequestLocked starts a request of the running turn (if any), with its id and deadline.
func (s *Session) newRequestLocked() *permission {
	p := &permission{id: uuid.NewString(), createdAt: s.host.Now().UTC(), answer: make(chan ask.Outcome, 1)}
	p.deadline = p.createdAt.Add(s.cfg.PermissionTimeout)
	if s.turn != nil {
		p.turnID = s.turn.ID
	}
	return p
}

// askLocked logs p for clients, answers it at once when nobody may (no running turn) or the session's policy
// does (permissions only), and otherwise waits for the first valid answer, the deadline, or the agent giving
// up. It is called with mu held and releases it.
func (s *Session) askLocked(ctx context.Context, p *permission, clientParams []byte) (json.RawMessage, error) {
	meta := translate.GatewayMeta{Epoch: s.Epoch, TurnID: p.turnID, Deadline: p.deadline.Format(time.RFC3339Nano)}
	if p.elicit == nil {
		meta.PermissionID = p.id
	}
	kind := eventlog.KindPermissionRequest
	if p.elicit != nil {
		kind = eventlog.KindElicitationRequest
	}
	p.seq, _ = s.log.Append(kind, func(seq uint64) ([]byte, error) {
		meta.Seq = seq
		return translate.AppendRequest(nil, p.id, p.method(), clientParams, meta)
	})
	p.params, p.meta = clientParams, meta
	var auto []AnswerTo
	byPolicy := false
	switch {
	case s.turn == nil || s.turn.cancelRequested || s.status != store.StatusRunning:
		// Nobody can answer for a turn that is ending: ACP wants `cancelled` after session/cancel.
		auto = s.resolveLocked(p, p.cancelled("turn not running"), "cancel")
	default:
		if o, ok := decideByPolicy(s.Policy, p.req); ok && p.elicit == nil {
			// The owner chose the policy when creating the session: the automatic answer is theirs.
			auto, byPolicy = s.resolveAsLocked(p, o, "policy", s.Owner), true
		} else {
			s.perms[p.id] = p
			s.turn.notifyAskedLocked() // a waiting REST client returns: the user is needed
		}
	}
	s.mu.Unlock()
	Deliver(auto)
	if byPolicy {
		s.audit(s.Owner, "permission_answer", "permission", p.id, "by", "policy", "allowed", auto[0].o.Allowed)
	}

	timer := time.NewTimer(time.Until(p.deadline))
	defer timer.Stop()
	select {
	case o := <-p.answer:
		return o.MarshalResult(), nil
	case <-timer.C:
		s.resolvePending(p.id, p.deny("deadline passed"), "deadline")
		return (<-p.answer).MarshalResult(), nil
	case <-ctx.Done():
		// The agent withdrew the request ($/cancel_request) or went away.
		s.resolvePending(p.id, p.deny("withdrawn by the agent"), "agent")
		return nil, ctx.Err()
	}
}

// method is the JSON-RPC method of p's request frame.
func (p *permission) method() string {
	if p.elicit != nil {
		return "elicitation/create"
	}
	return "session/request_permission"
}

// deny is the answer the gateway gives on its own (close, deadline, agent exit): the agent's reject option
// for a permission, decline for an elicitation.
func (p *permission) deny(reason string) ask.Outcome {
	if p.elicit != nil {
		return p.elicit.Decline(reason)
	}
	return p.req.Deny(reason)
}

// cancelled is the answer to a request of a cancelled turn: `cancelled` for a permission, as ACP requires
// after session/cancel; decline for an elicitation, which the user never answered.
func (p *permission) cancelled(reason string) ask.Outcome {
	if p.elicit != nil {
		return p.elicit.Decline(reason)
	}
	return ask.Outcome{Reason: reason}
}

// decide maps a client's answer to p's outcome. An answer meant for the other kind of request finds nothing.
func (p *permission) decide(a ask.ClientAnswer) (ask.Outcome, error) {
	if p.elicit != nil {
		if a.For == "permission" {
			return ask.Outcome{}, sessionerr.ErrPermissionUnknown
		}
		return p.elicit.Decide(a) // its errors wrap ErrInvalidElicitationAnswer
	}
	if a.For == "elicitation" {
		return ask.Outcome{}, sessionerr.ErrElicitationUnknown
	}
	o, err := p.req.Decide(a)
	if errors.Is(err, ask.ErrUnknownOption) {
		return ask.Outcome{}, sessionerr.ErrUnknownOption
	}
	if err != nil {
		return ask.Outcome{}, errors.Join(sessionerr.ErrBadRequest, err)
	}
	return o, nil
}

// resolveLocked records an outcome: the request leaves the pending set, clients get
// `_gateway/permission_resolved`, and the returned answer must be delivered after unlocking.
func (s *Session) resolveLocked(p *permission, o ask.Outcome, by string) []AnswerTo {
	return s.resolveAsLocked(p, o, by, principal.Principal{})
}

// resolveAsLocked is resolveLocked naming who answered (actor), when a principal did.
func (s *Session) resolveAsLocked(p *permission, o ask.Outcome, by string, who principal.Principal) []AnswerTo {
	delete(s.perms, p.id)
	s.rememberResolvedLocked(p.id)
	res := o.ClientJSON()
	if p.elicit != nil {
		s.appendGatewayLocked("_gateway/elicitation_resolved", p.turnID, withActor(map[string]any{
			"requestId": p.id, "outcome": res, "by": by,
		}, who))
		return []AnswerTo{{p, o}}
	}
	s.cfg.Metrics.PermissionResolved(by, o.Allowed, s.host.Now().Sub(p.createdAt))
	s.appendGatewayLocked("_gateway/permission_resolved", p.turnID, withActor(map[string]any{
		"permissionId": p.id, "outcome": res, "by": by,
	}, who))
	return []AnswerTo{{p, o}}
}

// rememberResolvedLocked keeps the last 1 024 resolved ids so a late answer gets "already resolved" rather
// than "not found".
func (s *Session) rememberResolvedLocked(id string) {
	const keep = 1024
	s.resolved[id] = struct{}{}
	s.resolvedOrder = append(s.resolvedOrder, id)
	if len(s.resolvedOrder) > keep {
		delete(s.resolved, s.resolvedOrder[0])
		s.resolvedOrder = s.resolvedOrder[1:]
	}
}

// resolvePending resolves a request if it is still pending; a lost race is not an error.
func (s *Session) resolvePending(id string, o ask.Outcome, by string) {
	s.mu.Lock()
	var as []AnswerTo
	if p, ok := s.perms[id]; ok {
		as = s.resolveLocked(p, o, by)
	}
	s.mu.Unlock()
	Deliver(as)
}

// Answer applies a client's answer to a pending request. The first valid answer wins; an option the agent did
// not offer is ErrUnknownOption and leaves the request pending.
func (s *Session) Answer(permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, error) {
	o, _, err := s.answer(principal.Principal{}, permissionID, a, by)
	return o, err
}

// answer is Answer by who, also returning the running turn the request belonged to.
func (s *Session) answer(who principal.Principal, permissionID string, a ask.ClientAnswer, by string) (ask.Outcome, *Turn, error) {
	s.mu.Lock()
	p, ok := s.perms[permissionID]
	if !ok {
		_, was := s.resolved[permissionID]
		s.mu.Unlock()
		switch {
		case was:
			return ask.Outcome{}, nil, sessionerr.ErrAlreadyResolved
		case a.For == "elicitation":
			return ask.Outcome{}, nil, sessionerr.ErrElicitationUnknown
		}
		return ask.Outcome{}, nil, sessionerr.ErrPermissionUnknown
	}
	o, err := p.decide(a)
	if err != nil {
		s.mu.Unlock()
		return ask.Outcome{}, nil, err
	}
	var t *Turn
	if s.turn != nil && s.turn.ID == p.turnID {
		t = s.turn
	}
	as := s.resolveAsLocked(p, o, by, who)
	s.mu.Unlock()
	Deliver(as)
	if p.elicit != nil {
		s.audit(who, "elicitation_answer", "elicitation", permissionID, "by", by, "action", o.Action)
	} else {
		s.audit(who, "permission_answer", "permission", permissionID, "by", by, "allowed", o.Allowed)
	}
	return o, t, nil
}

// denyPendingLocked denies pending requests (of one turn, or all when turnID is empty) the way the gateway
// denies on its own: the agent's reject option, else cancelled.
func (s *Session) denyPendingLocked(turnID, by, reason string) []AnswerTo {
	var as []AnswerTo
	for _, p := range s.pendingLocked() {
		if turnID == "" || p.turnID == turnID {
			as = append(as, s.resolveLocked(p, p.deny(reason), by)...)
		}
	}
	return as
}

// cancelPendingLocked answers a turn's pending requests `cancelled`, as ACP requires after session/cancel.
func (s *Session) cancelPendingLocked(turnID string) []AnswerTo {
	var as []AnswerTo
	for _, p := range s.pendingLocked() {
		if p.turnID == turnID || p.turnID == "" {
			as = append(as, s.resolveLocked(p, p.cancelled("turn cancelled"), "cancel")...)
		}
	}
	return as
}

// pendingLocked returns the pending requests in the order they were made.
func (s *Session) pendingLocked() []*permission {
	out := make([]*permission, 0, len(s.perms))
	for _, p := range s.perms {
		out = append(out, p)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].seq < out[j-1].seq; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (s *Session) pendingViewsLocked() []PermissionView {
	ps := s.pendingLocked()
	out := make([]PermissionView, 0, len(ps))
	for _, p := range ps {
		if p.elicit != nil {
			continue
		}
		out = append(out, PermissionView{ID: p.id, TurnID: p.turnID, ToolCall: p.toolCall, Options: p.req.Options, CreatedAt: p.createdAt, Deadline: p.deadline})
	}
	return out
}

// PendingPermissions lists the pending requests.
func (s *Session) PendingPermissions() []PermissionView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingViewsLocked()
}

// PendingFrames returns the request frames of pending permissions and elicitations with seq <= upTo, for a client that resumes
// after them and would otherwise never see requests it still has to answer. Each is the logged frame with
// `_meta.gateway.resent: true`: it keeps its original seq, which is older than what the client has seen, so
// clients must not move their cursor on it. Entry.Seq is that original seq.
func (s *Session) PendingFrames(upTo uint64) []eventlog.Entry {
	s.mu.Lock()
	var ps []*permission
	for _, p := range s.pendingLocked() {
		if p.seq <= upTo {
			ps = append(ps, p)
		}
	}
	s.mu.Unlock()
	out := make([]eventlog.Entry, 0, len(ps))
	for _, p := range ps {
		m := p.meta
		m.Resent = true
		f, err := translate.AppendRequest(nil, p.id, p.method(), p.params, m)
		if err != nil {
			continue // the same params encoded when the request was logged
		}
		out = append(out, eventlog.Entry{Seq: p.seq, Frame: f})
	}
	return out
}
