// Package agentusage reads the token usage and cost agents report (a prompt's answer, a usage_update). It
// holds no session state: the session core keeps the turn's usage and a session's cumulative cost.
package agentusage

import (
	"encoding/json"
	"math"

	"github.com/acp-gateway/gateway/internal/metrics"
)

// Turn is the token usage the agent reported for one turn (ACP's PromptResponse.usage), as the turn's
// result, lastTurn, `_gateway/turn_ended` and the snapshot's usage.lastTurn carry it. The optional counts are
// nil when the agent did not report them.
type Turn struct {
	InputTokens       uint64  `json:"inputTokens"`
	OutputTokens      uint64  `json:"outputTokens"`
	TotalTokens       uint64  `json:"totalTokens"`
	ThoughtTokens     *uint64 `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64 `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64 `json:"cachedWriteTokens,omitempty"`
}

// OfPrompt reads the usage of an agent's session/prompt answer. An answer without one gives nil; so does a
// malformed one (the agent is untrusted), with ok false so the caller can say so.
func OfPrompt(result json.RawMessage) (u *Turn, ok bool) {
	var r struct {
		Usage json.RawMessage `json:"usage"`
	}
	if len(result) == 0 || json.Unmarshal(result, &r) != nil || len(r.Usage) == 0 || string(r.Usage) == "null" {
		return nil, true
	}
	var wire struct {
		InputTokens       *uint64 `json:"inputTokens"`
		OutputTokens      *uint64 `json:"outputTokens"`
		TotalTokens       *uint64 `json:"totalTokens"`
		ThoughtTokens     *uint64 `json:"thoughtTokens"`
		CachedReadTokens  *uint64 `json:"cachedReadTokens"`
		CachedWriteTokens *uint64 `json:"cachedWriteTokens"`
	}
	if json.Unmarshal(r.Usage, &wire) != nil || wire.InputTokens == nil || wire.OutputTokens == nil || wire.TotalTokens == nil {
		return nil, false
	}
	return &Turn{
		InputTokens: *wire.InputTokens, OutputTokens: *wire.OutputTokens, TotalTokens: *wire.TotalTokens,
		ThoughtTokens: wire.ThoughtTokens, CachedReadTokens: wire.CachedReadTokens, CachedWriteTokens: wire.CachedWriteTokens,
	}, true
}

// Tokens is u as the metrics count it.
func (u *Turn) Tokens() metrics.Tokens {
	return metrics.Tokens{Input: u.InputTokens, Output: u.OutputTokens, Total: u.TotalTokens,
		Thought: u.ThoughtTokens, CachedRead: u.CachedReadTokens, CachedWrite: u.CachedWriteTokens}
}

// ReportedCost is the cumulative session cost of a usage_update's params, when it has a usable one.
func ReportedCost(params []byte) (currency string, amount float64, ok bool) {
	var p struct {
		Update struct {
			Cost *struct {
				Amount   *float64 `json:"amount"`
				Currency string   `json:"currency"`
			} `json:"cost"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil || p.Update.Cost == nil || p.Update.Cost.Amount == nil {
		return "", 0, false
	}
	a := *p.Update.Cost.Amount
	if math.IsNaN(a) || math.IsInf(a, 0) || a < 0 {
		return "", 0, false
	}
	return p.Update.Cost.Currency, a, true
}
