package core

import "github.com/acp-gateway/gateway/internal/agentusage"

// noteUsageLocked counts the cost growth a live agent's usage_update reports, for the principal who prompted
// the running turn (the session's owner outside a turn). The caller holds mu.
func (s *Session) noteUsageLocked(params []byte) {
	currency, amount, ok := agentusage.ReportedCost(params)
	if !ok {
		return
	}
	grew := s.state.Costs.Growth(currency, amount)
	who := s.Owner.ID
	if t := s.state.Turn; t != nil {
		who = t.Payer(who)
	}
	s.cfg.Metrics.Cost(who, s.Agent, currency, grew)
}
