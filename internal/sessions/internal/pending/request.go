package pending

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/translate"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// Request is one pending request the gateway put to users for its agent, waiting for its first valid
// answer: a `session/request_permission`, or (Elicit set) an `elicitation/create`. Both share one life:
// logged, listed, answered by any face, resolved by the gateway on cancel, close, deadline and agent exit.
type Request struct {
	// Set before the request is logged, static after.
	ID        string
	TurnID    string
	Req       ask.PermissionRequest
	Elicit    *ask.ElicitationRequest // set for an elicitation
	CreatedAt time.Time
	Deadline  time.Time
	ToolCall  json.RawMessage       // the request's tool call merged over what the agent sent before
	Params    []byte                // the request's params as clients see them
	Meta      translate.GatewayMeta // the logged frame's stamp, seq included
	Seq       uint64                // its seq
	answer    chan ask.Outcome      // buffered 1; written once by whoever resolves it
}

// New is a request of turnID (or none) made at createdAt, answered by the gateway at deadline.
func New(id, turnID string, createdAt, deadline time.Time) *Request {
	return &Request{ID: id, TurnID: turnID, CreatedAt: createdAt, Deadline: deadline, answer: make(chan ask.Outcome, 1)}
}

// FromLog is the request a logged `session/request_permission` or `elicitation/create` frame at seq made, as
// a restart or a copy reads it back. createdAt is the deadline minus timeout, as it was made.
func FromLog(seq uint64, info translate.RestoreInfo, timeout time.Duration) (*Request, error) {
	p := &Request{
		TurnID: info.Meta.TurnID,
		// The logged params carry the stamp; Frames' re-stamp replaces it in place, giving the frame the live
		// session would send.
		Params: info.Params, Meta: info.Meta, Seq: seq, answer: make(chan ask.Outcome, 1),
	}
	var deadline string
	if rp := info.Permission; rp != nil {
		p.ID, p.Req, p.ToolCall, deadline = rp.ID, rp.Request, rp.ToolCall, rp.Deadline
	} else {
		re := info.Elicitation
		p.ID, p.Elicit, deadline = re.ID, &re.Request, re.Deadline
	}
	d, err := time.Parse(time.RFC3339Nano, deadline)
	if err != nil {
		return nil, fmt.Errorf("request %s: deadline: %w", p.ID, err)
	}
	p.CreatedAt, p.Deadline = d.Add(-timeout), d
	return p, nil
}

// Method is the JSON-RPC method of the request's frame.
func (p *Request) Method() string {
	if p.Elicit != nil {
		return "elicitation/create"
	}
	return "session/request_permission"
}

// Deny is the answer the gateway gives on its own (close, deadline, agent exit): the agent's reject option
// for a permission, decline for an elicitation.
func (p *Request) Deny(reason string) ask.Outcome {
	if p.Elicit != nil {
		return p.Elicit.Decline(reason)
	}
	return p.Req.Deny(reason)
}

// Cancelled is the answer to a request of a cancelled turn: `cancelled` for a permission, as ACP requires
// after session/cancel; decline for an elicitation, which the user never answered.
func (p *Request) Cancelled(reason string) ask.Outcome {
	if p.Elicit != nil {
		return p.Elicit.Decline(reason)
	}
	return ask.Outcome{Reason: reason}
}

// Decide maps a client's answer to the request's outcome. An answer meant for the other kind of request
// finds nothing.
func (p *Request) Decide(a ask.ClientAnswer) (ask.Outcome, error) {
	if p.Elicit != nil {
		if a.For == "permission" {
			return ask.Outcome{}, sessionerr.ErrPermissionUnknown
		}
		return p.Elicit.Decide(a) // its errors wrap ErrInvalidElicitationAnswer
	}
	if a.For == "elicitation" {
		return ask.Outcome{}, sessionerr.ErrElicitationUnknown
	}
	o, err := p.Req.Decide(a)
	if errors.Is(err, ask.ErrUnknownOption) {
		return ask.Outcome{}, sessionerr.ErrUnknownOption
	}
	if err != nil {
		return ask.Outcome{}, errors.Join(sessionerr.ErrBadRequest, err)
	}
	return o, nil
}

// AnswerTo pairs a resolved request with the outcome to deliver to the waiting agent handler.
type AnswerTo struct {
	p *Request
	o ask.Outcome
}

// Answer is o for p, to deliver once the session's lock is released.
func Answer(p *Request, o ask.Outcome) AnswerTo { return AnswerTo{p, o} }

// Outcome is the answer's outcome.
func (a AnswerTo) Outcome() ask.Outcome { return a.o }

// Deliver hands outcomes to the agent handlers waiting for them. Channels are buffered: never blocks.
func Deliver(as []AnswerTo) {
	for _, a := range as {
		a.p.answer <- a.o
	}
}

// Await waits for p's first answer, its deadline or ctx's end (the agent withdrew the request or went away),
// and returns the result for the agent. At the deadline or ctx's end it asks resolve to resolve p with the
// gateway's own denial if it is still pending (a lost race is no error).
func (p *Request) Await(ctx context.Context, resolve func(id string, o ask.Outcome, by string)) (json.RawMessage, error) {
	timer := time.NewTimer(time.Until(p.Deadline))
	defer timer.Stop()
	select {
	case o := <-p.answer:
		return o.MarshalResult(), nil
	case <-timer.C:
		resolve(p.ID, p.Deny("deadline passed"), "deadline")
		return (<-p.answer).MarshalResult(), nil
	case <-ctx.Done():
		resolve(p.ID, p.Deny("withdrawn by the agent"), "agent")
		return nil, ctx.Err()
	}
}
