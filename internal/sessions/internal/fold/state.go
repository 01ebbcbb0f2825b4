// Package fold is what a session's logged frames say of it, and the one step that folds a frame into it:
// the owner as it logs a gateway frame (FoldStatus), a restart and another node's copy as they read a stored
// frame back (Frame). The session guards a State with its own lock; this package takes none.
package fold

import (
	"encoding/json"
	"time"

	"github.com/acp-gateway/gateway/internal/agentusage"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/statusfold"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate"
)

// State is the part of a session its frames decide: status, turns, keyed prompts, pending requests, the
// epoch chain and the costs the agent reported.
type State struct {
	Status   store.Status
	Reason   string
	Turn     *turns.Turn         // the running turn, nil when none
	Latest   *turns.Turn         // the running turn, else the last one, for clients that join late
	LastTurn *turns.LastTurnView // how the last turn ended, nil before the first
	Keys     turns.Keys          // recent keyed prompts and their turns
	Perms    pending.Table       // requests that wait for a user, and those lately resolved
	// Epochs is the epoch chain when the log holds frames of earlier epochs (hydration); nil for a session
	// that only ever had its own epoch.
	Epochs []eventlog.EpochStart
	Costs  Costs // the cumulative cost the agent last reported, by currency
}

// Limits are the session's bounds a fold keeps to.
type Limits struct {
	MaxTurnText       int           // bytes of a turn's text kept
	PermissionTimeout time.Duration // a request's life: its creation is its deadline minus this
}

// FoldStatus sets the status a logged frame with method and params states; other frames leave it (statusfold).
func (st *State) FoldStatus(method string, params []byte) error {
	running := ""
	if st.Turn != nil {
		running = st.Turn.ID
	}
	status, reason, err := statusfold.Fold(method, params, st.Status, st.Reason, running)
	st.Status, st.Reason = status, reason
	return err
}

// Frame folds one logged frame at seq, read by translate.Context.Restore, as the live calls that logged it
// did: what it says of the transcript, turns and requests, then its status.
func (st *State) Frame(seq uint64, info translate.RestoreInfo, lim Limits) error {
	if err := st.frame(seq, info, lim); err != nil {
		return err
	}
	return st.FoldStatus(info.Method, info.Params)
}

func (st *State) frame(seq uint64, info translate.RestoreInfo, lim Limits) error {
	if ep := info.Meta.Epoch; ep != "" && (len(st.Epochs) == 0 || st.Epochs[len(st.Epochs)-1].Epoch != ep) {
		st.Epochs = append(st.Epochs, eventlog.EpochStart{Epoch: ep, FirstSeq: seq})
	}
	switch info.Method {
	case "session/update":
		if info.Kind == "usage_update" {
			// A cost is cumulative: what the agent reports next is counted by how much it grew from this.
			if currency, amount, ok := agentusage.ReportedCost(info.Params); ok {
				st.Costs.Growth(currency, amount)
			}
		}
		if t := st.Turn; t != nil {
			t.WriteText(info.Text, lim.MaxTurnText)
		}
	case "session/request_permission", "elicitation/create":
		p, err := pending.FromLog(seq, info, lim.PermissionTimeout)
		if err != nil {
			return err
		}
		st.Perms.Add(p)
	case "_gateway/permission_resolved", "_gateway/elicitation_resolved":
		var p struct {
			PermissionID string `json:"permissionId"`
			RequestID    string `json:"requestId"` // elicitation_resolved
		}
		if err := json.Unmarshal(info.Params, &p); err != nil {
			return err
		}
		st.Perms.Resolve(p.PermissionID + p.RequestID) // one of them is set
	case statusfold.TurnStarted:
		p, err := turns.ReadStarted(info.Params)
		if err != nil {
			return err
		}
		t := turns.Restored(p.TurnID, p.StartedAt, p.Actor)
		st.Turn, st.Latest = t, t
		if p.IdempotencyKey != nil {
			st.Keys.Add(*p.IdempotencyKey, t.ID)
		}
	case statusfold.TurnEnded:
		return st.turnEnded(info.Params)
	}
	return nil
}

// turnEnded ends the running turn as the live session did and records LastTurn; the status follows.
func (st *State) turnEnded(params []byte) error {
	lt, turnErr, err := turns.ReadEnded(params)
	if err != nil {
		return err
	}
	st.LastTurn = lt
	st.Keys.Ended(turns.TurnResult{TurnID: lt.TurnID, StopReason: lt.StopReason, Outcome: lt.Outcome, Err: turnErr})
	if t := st.Turn; t != nil && t.ID == lt.TurnID {
		t.End(turns.TurnResult{TurnID: t.ID, StopReason: lt.StopReason, Outcome: lt.Outcome, Usage: lt.Usage, Err: turnErr})
		st.Turn = nil
	}
	return nil
}
