package core

import "github.com/acp-gateway/gateway/internal/agentusage"

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
	currency, amount, ok := agentusage.ReportedCost(params)
	if !ok {
		return
	}
	grew := s.costGrowthLocked(currency, amount)
	who := s.Owner.ID
	if t := s.turn; t != nil {
		who = t.Payer(who)
	}
	s.cfg.Metrics.Cost(who, s.Agent, currency, grew)
}
