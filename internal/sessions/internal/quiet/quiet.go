// Package quiet notices a turn during which the agent sends nothing: an agent with a bad key or no network
// often retries for minutes without a frame, and says why only on its stderr. The session logs the notice.
package quiet

import (
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/agenterr"
)

// Bounds of the quiet-turn notice: the wait doubles after each notice up to maxWait, and the notice carries
// the last stderrLines lines of the agent's stderr.
const (
	maxWait     = 5 * time.Minute
	stderrLines = 10
)

// Agent is what a watch reads of the agent: how much it sent so far and its stderr.
type Agent interface {
	Received() uint64
	Stderr() string
}

// Turn is the turn a watch is for, as the session knows it.
type Turn interface {
	// WaitsForUser reports whether a request of the turn waits for a person: the agent is then quiet
	// because of it, which is no news.
	WaitsForUser() bool
	// Notice tells clients the agent was quiet for seconds, with stderrTail, unless the turn ended meanwhile.
	Notice(seconds int64, stderrTail []string)
}

// Watch watches one turn for silence. It is owned by the goroutine that runs the turn.
type Watch struct {
	agent Agent
	turn  Turn
	every time.Duration // how long a silence is before the first notice; 0 = never
	timer *time.Timer   // nil when notices are off
	seen  uint64        // agent.Received() at the last check
	since time.Time     // when a check last saw the agent send something (or the turn began)
	wait  time.Duration // until the next check
}

// Start watches turn on agent, with a first notice after every of silence (0: no notices).
func Start(agent Agent, turn Turn, every time.Duration) *Watch {
	q := &Watch{agent: agent, turn: turn, every: every}
	if every > 0 {
		q.seen, q.since, q.wait = agent.Received(), time.Now(), every
		q.timer = time.NewTimer(every)
	}
	return q
}

// Due fires when the next check is due; nil (never) when notices are off.
func (q *Watch) Due() <-chan time.Time {
	if q.timer == nil {
		return nil
	}
	return q.timer.C
}

// Stop ends the watch.
func (q *Watch) Stop() {
	if q.timer != nil {
		q.timer.Stop()
	}
}

// Check is called when Due fired: if the agent sent nothing since the last check, and the turn is not
// waiting for a person, it notices the silence, then waits twice as long.
func (q *Watch) Check() {
	now := time.Now()
	if n := q.agent.Received(); n != q.seen || q.turn.WaitsForUser() {
		q.seen, q.since, q.wait = n, now, q.every
		q.timer.Reset(q.wait)
		return
	}
	lines := lastLines(agenterr.StderrTail(q.agent.Stderr()), stderrLines)
	q.turn.Notice(int64(now.Sub(q.since)/time.Second), lines)
	q.wait = min(2*q.wait, max(maxWait, q.every))
	q.timer.Reset(q.wait)
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
