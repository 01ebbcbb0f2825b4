package sessions

import (
	"encoding/json"
	"math"

	"github.com/acp-gateway/gateway/internal/metrics"
)

// TurnUsage is the token usage the agent reported for one turn (ACP's PromptResponse.usage), as the turn's
// result, lastTurn, `_gateway/turn_ended` and the snapshot's usage.lastTurn carry it. The optional counts are
// nil when the agent did not report them.
type TurnUsage struct {
	InputTokens       uint64  `json:"inputTokens"`
	OutputTokens      uint64  `json:"outputTokens"`
	TotalTokens       uint64  `json:"totalTokens"`
	ThoughtTokens     *uint64 `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64 `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64 `json:"cachedWriteTokens,omitempty"`
}

// turnUsageOf reads the usage of an agent's session/prompt answer. An answer without one gives nil; so does a
// malformed one (the agent is untrusted), with ok false so the caller can say so.
func turnUsageOf(result json.RawMessage) (u *TurnUsage, ok bool) {
	var r struct {
		Usage json.RawMessage `json:"usage"`
	}
	if len(result) == 0 || json.Unmarshal(result, &r) != nil || len(nullToNil(r.Usage)) == 0 {
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
	return &TurnUsage{
		InputTokens: *wire.InputTokens, OutputTokens: *wire.OutputTokens, TotalTokens: *wire.TotalTokens,
		ThoughtTokens: wire.ThoughtTokens, CachedReadTokens: wire.CachedReadTokens, CachedWriteTokens: wire.CachedWriteTokens,
	}, true
}

// tokens is u as the metrics count it.
func (u *TurnUsage) tokens() metrics.Tokens {
	return metrics.Tokens{Input: u.InputTokens, Output: u.OutputTokens, Total: u.TotalTokens,
		Thought: u.ThoughtTokens, CachedRead: u.CachedReadTokens, CachedWrite: u.CachedWriteTokens}
}

// reportedCost is the cumulative session cost of a usage_update's params, when it has a usable one.
func reportedCost(params []byte) (currency string, amount float64, ok bool) {
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

// costGrowthLocked is how much the session's cost in currency grew since the last usage_update said it, and
// records amount as the latest. The cost is cumulative per session: an amount below the last one means the
// agent started counting again (a new agent process), and all of it is new. The caller holds mu.
func (s *Session) costGrowthLocked(currency string, amount float64) float64 {
	if s.costSeen == nil {
		s.costSeen = map[string]float64{}
	}
	last, seen := s.costSeen[currency]
	if len(s.costSeen) >= maxCostCurrencies && !seen {
		return 0 // an agent that invents currencies gets no more entries, and no more counted cost
	}
	s.costSeen[currency] = amount
	if amount >= last {
		return amount - last
	}
	return amount
}

// maxCostCurrencies bounds the currencies a session remembers a cost in.
const maxCostCurrencies = 8

// noteUsageLocked counts the cost growth a live agent's usage_update reports, for the principal who prompted
// the running turn (the session's owner outside a turn). The caller holds mu.
func (s *Session) noteUsageLocked(params []byte) {
	currency, amount, ok := reportedCost(params)
	if !ok {
		return
	}
	grew := s.costGrowthLocked(currency, amount)
	who := s.Owner.ID
	if t := s.turn; t != nil {
		who = t.payer(who)
	}
	s.reg.cfg.Metrics.Cost(who, s.Agent, currency, grew)
}
