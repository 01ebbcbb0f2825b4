package core

import (
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agents"
)

// Bounds of the quiet-turn notice (Config.QuietNotice): the wait doubles after each notice up to
// maxQuietWait, and the notice carries the last quietStderrLines lines of the agent's stderr.
const (
	maxQuietWait     = 5 * time.Minute
	quietStderrLines = 10
)

// quietWatch notices a turn during which the agent sends nothing: an agent with a bad key or no network
// often retries for minutes without a frame, and says why only on its stderr. It is owned by runTurn.
type quietWatch struct {
	s      *Session
	conn   *agents.Conn
	turnID string
	every  time.Duration // Config.QuietNotice
	timer  *time.Timer   // nil when notices are off
	seen   uint64        // conn.Received() at the last check
	since  time.Time     // when a check last saw the agent send something (or the turn began)
	wait   time.Duration // until the next check
}

// watchQuiet starts watching turn t for silence on conn.
func (s *Session) watchQuiet(conn *agents.Conn, t *Turn) *quietWatch {
	q := &quietWatch{s: s, conn: conn, turnID: t.ID, every: s.cfg.QuietNotice}
	if q.every > 0 {
		q.seen, q.since, q.wait = conn.Received(), time.Now(), q.every
		q.timer = time.NewTimer(q.every)
	}
	return q
}

// due fires when the next check is due; nil (never) when notices are off.
func (q *quietWatch) due() <-chan time.Time {
	if q.timer == nil {
		return nil
	}
	return q.timer.C
}

func (q *quietWatch) stop() {
	if q.timer != nil {
		q.timer.Stop()
	}
}

// check is called when due fired: if the agent sent nothing since the last check, and the turn is not
// waiting for a person to answer a permission request, it logs and tells clients, then waits twice as long.
func (q *quietWatch) check() {
	now := time.Now()
	if n := q.conn.Received(); n != q.seen || q.s.waitsForUser(q.turnID) {
		q.seen, q.since, q.wait = n, now, q.every
		q.timer.Reset(q.wait)
		return
	}
	q.notice(now.Sub(q.since))
	q.wait = min(2*q.wait, max(maxQuietWait, q.every))
	q.timer.Reset(q.wait)
}

// notice logs the agent's recent stderr at info and appends `_gateway/agent_quiet {turnId, seconds,
// stderrTail}` to the log; stderrTail is redacted like an agent error's stderr.
func (q *quietWatch) notice(quiet time.Duration) {
	lines := lastLines(agenterr.StderrTail(q.conn.Stderr()), quietStderrLines)
	secs := int64(quiet / time.Second)
	q.s.logger.Info("agent quiet: no frame from the agent during the turn", "turn", q.turnID, "seconds", secs,
		"stderr", strings.Join(lines, "\n"))
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	if q.s.turn == nil || q.s.turn.ID != q.turnID {
		return // the turn ended meanwhile
	}
	q.s.appendGatewayLocked("_gateway/agent_quiet", q.turnID, map[string]any{
		"turnId": q.turnID, "seconds": secs, "stderrTail": lines,
	})
}

// waitsForUser reports whether a permission request of the turn is pending: the agent is then quiet because
// it waits for a person, which is no news.
func (s *Session) waitsForUser(turnID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perms.InTurn(turnID)
}

// lastLines is the last n non-empty lines of text, never nil (clients get an array).
func lastLines(text string, n int) []string {
	lines := []string{}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
