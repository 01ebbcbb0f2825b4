package core

import (
	"strings"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/quiet"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
)

// watchQuiet starts watching turn t for silence on conn (package quiet): the session says so when the agent
// sends nothing for Config.QuietNotice.
func (s *Session) watchQuiet(conn *agents.Conn, t *turns.Turn) *quiet.Watch {
	return quiet.Start(conn, quietTurn{s, t.ID}, s.cfg.QuietNotice)
}

// quietTurn is the turn a quiet watch is for.
type quietTurn struct {
	s      *Session
	turnID string
}

// WaitsForUser reports whether a permission request of the turn is pending.
func (q quietTurn) WaitsForUser() bool {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	return q.s.state.Perms.InTurn(q.turnID)
}

// Notice logs the agent's recent stderr at info and appends `_gateway/agent_quiet {turnId, seconds,
// stderrTail}` to the log; stderrTail is redacted like an agent error's stderr.
func (q quietTurn) Notice(secs int64, lines []string) {
	s := q.s
	s.logger.Info("agent quiet: no frame from the agent during the turn", "turn", q.turnID, "seconds", secs,
		"stderr", strings.Join(lines, "\n"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Turn == nil || s.state.Turn.ID != q.turnID {
		return // the turn ended meanwhile
	}
	s.appendGatewayLocked("_gateway/agent_quiet", q.turnID, map[string]any{
		"turnId": q.turnID, "seconds": secs, "stderrTail": lines,
	})
}
