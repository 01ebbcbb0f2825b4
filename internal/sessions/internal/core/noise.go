package core

import "github.com/acp-gateway/gateway/internal/agents"

// maxNoiseFrames bounds the diagnostics one session logs for an agent's non-JSON stdout lines.
const maxNoiseFrames = 256

// AgentNoise implements agents.NoiseHandler: a line on the agent's stdout that is not JSON-RPC becomes a
// bounded `_gateway/agent_output` diagnostic frame instead of killing the session (or vanishing).
func (s *Session) AgentNoise(prefix []byte, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noise++
	switch {
	case s.noise <= maxNoiseFrames:
		turnID := ""
		if s.state.Turn != nil {
			turnID = s.state.Turn.ID
		}
		line, _ := agents.Scrub(string(prefix), s.agentSecretsLocked()) // an agent may print its MCP config or login
		s.appendGatewayLocked("_gateway/agent_output", turnID, map[string]any{
			"stream": "stdout", "line": line, "bytes": total, "truncated": total > len(prefix),
		})
	case s.noise == maxNoiseFrames+1:
		s.appendGatewayLocked("_gateway/agent_output", "", map[string]any{
			"stream": "stdout", "dropped": true, "note": "further non-JSON output of this agent is not shown",
		})
		s.logger.Warn("agent keeps writing non-JSON lines to stdout; no longer shown to clients")
	}
}
