package pending

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/translate"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// keepResolved is how many resolved ids a table remembers, so a late answer gets "already resolved" rather
// than "not found".
const keepResolved = 1024

// Table is a session's pending requests by gateway id and the ids lately resolved. The session guards it
// with its own lock: no method takes one.
type Table struct {
	byID     map[string]*Request
	resolved map[string]struct{}
	order    []string // eviction order of resolved
}

// Add makes p pending.
func (t *Table) Add(p *Request) {
	if t.byID == nil {
		t.byID = map[string]*Request{}
	}
	t.byID[p.ID] = p
}

// Get is the pending request id.
func (t *Table) Get(id string) (*Request, bool) {
	p, ok := t.byID[id]
	return p, ok
}

// Len is how many requests are pending.
func (t *Table) Len() int { return len(t.byID) }

// Resolve takes id out of the pending set and remembers it resolved.
func (t *Table) Resolve(id string) {
	delete(t.byID, id)
	if t.resolved == nil {
		t.resolved = map[string]struct{}{}
	}
	t.resolved[id] = struct{}{}
	t.order = append(t.order, id)
	if len(t.order) > keepResolved {
		delete(t.resolved, t.order[0])
		t.order = t.order[1:]
	}
}

// Drop takes id out of the pending set without remembering it resolved: a copy whose owner answered it at
// once, before its resolved frame arrives.
func (t *Table) Drop(id string) { delete(t.byID, id) }

// WasResolved reports whether id was lately resolved.
func (t *Table) WasResolved(id string) bool {
	_, ok := t.resolved[id]
	return ok
}

// ResolvedOrder is the remembered resolved ids, oldest first.
func (t *Table) ResolvedOrder() []string { return t.order }

// InTurn reports whether a request of turnID is pending.
func (t *Table) InTurn(turnID string) bool {
	for _, p := range t.byID {
		if p.TurnID == turnID {
			return true
		}
	}
	return false
}

// AtSeq is the pending request logged at seq, or nil.
func (t *Table) AtSeq(seq uint64) *Request {
	for _, p := range t.byID {
		if p.Seq == seq {
			return p
		}
	}
	return nil
}

// List returns the pending requests in the order they were made.
func (t *Table) List() []*Request {
	out := make([]*Request, 0, len(t.byID))
	for _, p := range t.byID {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Request) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
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

// ElicitationView is a pending elicitation as clients see it: what the agent asks, and (form mode) the
// schema an answer must match or (url mode) where the user should go.
type ElicitationView struct {
	ID              string          `json:"id"`
	TurnID          string          `json:"turnId,omitempty"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	CreatedAt       time.Time       `json:"createdAt"`
	Deadline        time.Time       `json:"deadline"`
}

// PermissionViews lists the pending permission requests in the order they were made.
func (t *Table) PermissionViews() []PermissionView {
	ps := t.List()
	out := make([]PermissionView, 0, len(ps))
	for _, p := range ps {
		if p.Elicit != nil {
			continue
		}
		out = append(out, PermissionView{ID: p.ID, TurnID: p.TurnID, ToolCall: p.ToolCall, Options: p.Req.Options, CreatedAt: p.CreatedAt, Deadline: p.Deadline})
	}
	return out
}

// ElicitationViews lists the pending elicitations in the order they were made.
func (t *Table) ElicitationViews() []ElicitationView {
	out := []ElicitationView{}
	for _, p := range t.List() {
		if e := p.Elicit; e != nil {
			out = append(out, ElicitationView{
				ID: p.ID, TurnID: p.TurnID, Mode: e.Mode, Message: e.Message, RequestedSchema: e.Schema, URL: e.URL,
				ElicitationID: e.ElicitationID, ToolCallID: e.ToolCallID, CreatedAt: p.CreatedAt, Deadline: p.Deadline,
			})
		}
	}
	return out
}

// ElicitationMode is the mode ("form" or "url") of a pending elicitation, "" when id is not one.
func (t *Table) ElicitationMode(id string) string {
	if p, ok := t.byID[id]; ok && p.Elicit != nil {
		return p.Elicit.Mode
	}
	return ""
}

// UpTo is the pending requests logged at or before upTo, in the order they were made.
func (t *Table) UpTo(upTo uint64) []*Request {
	var out []*Request
	for _, p := range t.List() {
		if p.Seq <= upTo {
			out = append(out, p)
		}
	}
	return out
}

// ResentFrames are the logged frames of ps with `_meta.gateway.resent: true`, each at its original seq, for
// a client that resumes after them and would otherwise never see requests it still has to answer.
func ResentFrames(ps []*Request) []eventlog.Entry {
	out := make([]eventlog.Entry, 0, len(ps))
	for _, p := range ps {
		m := p.Meta
		m.Resent = true
		f, err := translate.AppendRequest(nil, p.ID, p.Method(), p.Params, m)
		if err != nil {
			continue // the same params encoded when the request was logged
		}
		out = append(out, eventlog.Entry{Seq: p.Seq, Frame: f})
	}
	return out
}
