package sessionerr

import (
	"encoding/json"
	"errors"

	"github.com/acp-gateway/gateway/internal/store"
)

// ReplyTo is the Reply for an operation's outcome: its result (marshalled; nil = none) and log head, or err.
func ReplyTo(result any, head uint64, err error) store.Reply {
	if err != nil {
		return store.Reply{Head: head, Error: NewReplyError(err)}
	}
	if result == nil {
		return store.Reply{Head: head}
	}
	b, merr := json.Marshal(result)
	if merr != nil {
		return store.Reply{Head: head, Error: NewReplyError(merr)}
	}
	return store.Reply{Result: b, Head: head}
}

// NewReplyError describes err for the wire; nil for nil.
func NewReplyError(err error) *store.ReplyError {
	if err == nil {
		return nil
	}
	re := &store.ReplyError{Code: ErrorCode(err), Message: err.Error()}
	var tre *TurnRunningError
	if errors.As(err, &tre) && tre.TurnID != "" {
		re.Turn = &store.TurnRef{ID: tre.TurnID, StartedBy: tre.StartedBy}
	}
	if re.Code != CodeAgentError {
		return re
	}
	// ErrorMessage is the one encoding of an *AgentError; the reply carries it as a structure.
	var w agentErrorWire
	if json.Unmarshal([]byte(ErrorMessage(err)), &w) != nil {
		return re
	}
	re.Agent = &store.AgentFault{Op: w.Op, Error: w.Message, Stderr: w.Stderr, Start: w.Start}
	if w.RPC != nil {
		re.Agent.RPC, re.Agent.Code, re.Agent.Message = true, w.RPC.Code, w.RPC.Message
		re.Agent.Data, re.Agent.DataText = w.RPC.Data, w.RPC.DataText
	}
	return re
}

// ReplyErr is the error e describes: the same sentinel (errors.Is) with the same text, or an *AgentError with
// the agent's JSON-RPC error (errors.As *acp.RequestError); nil for nil.
func ReplyErr(e *store.ReplyError) error {
	if e == nil {
		return nil
	}
	if e.Code == CodeAgentError && e.Agent != nil {
		w := agentErrorWire{Op: e.Agent.Op, Message: e.Agent.Error, Stderr: e.Agent.Stderr, Start: e.Agent.Start}
		if e.Agent.RPC {
			w.RPC = &rpcWire{Code: e.Agent.Code, Message: e.Agent.Message, Data: e.Agent.Data, DataText: e.Agent.DataText}
		}
		return w.agentError()
	}
	if e.Turn != nil && e.Code == ErrorCode(ErrTurnRunning) {
		return &TurnRunningError{TurnID: e.Turn.ID, StartedBy: e.Turn.StartedBy}
	}
	return ErrorFromCode(e.Code, e.Message)
}
