// Package turns holds a session's turns: the Turn a prompt starts and how it ends (TurnResult), where it
// stands for a waiting client (State), the frames that start and end it as a restart reads them back, the
// keyed prompts a retry finds again (Keys), and the prompt's checks. The session guards a running turn with
// its own lock; this package takes none.
package turns

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/acp-gateway/gateway/internal/agentusage"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/telemetry"
	"github.com/acp-gateway/gateway/internal/translate"
	"github.com/acp-gateway/gateway/internal/turntext"
)

// Turn is one prompt and everything the agent did for it. Methods that change it are called with the
// session's lock held.
type Turn struct {
	// Static after construction.
	ID        string
	StartedAt time.Time
	by        string        // the principal id who prompted it ("" for the gateway's own)
	done      chan struct{} // closed when the turn has ended and result is set
	cancelCh  chan struct{} // closed on the first cancel request

	cancelRequested bool            // Guarded by the session's mu.
	text            turntext.Buffer // Guarded by the session's mu; agent message text, at most MaxTurnTextBytes.
	textTruncated   bool            // Guarded by the session's mu; text was cut: nothing more is collected.
	asked           chan struct{}   // Guarded by the session's mu; closed and replaced when a request of the turn waits for a user.
	cancelOnce      sync.Once
	startedBy       *principal.Ref   // Static after construction; who prompted, nil for the gateway's own code.
	span            *telemetry.Turn  // Static after construction; nil when tracing is off.
	usage           *agentusage.Turn // Guarded by the session's mu; what the agent's answer reported, set before it ends.
	result          TurnResult       // Written once before done is closed.
}

// TurnResult is how a turn ended.
type TurnResult struct {
	TurnID     string `json:"turnId"`
	StopReason string `json:"stopReason"`
	// Outcome is completed, cancelled or failed (ask.Outcome*).
	Outcome string `json:"turnOutcome"`
	Text    string `json:"text"`
	// Truncated says Text was cut at the session's bound (MaxTurnTextBytes); the log has the whole turn.
	Truncated bool `json:"truncated"`
	// Usage is the turn's token usage when the agent reported it.
	Usage *agentusage.Turn `json:"usage,omitempty"`
	// Err is set when the turn failed (the agent's JSON-RPC error, its exit, a node loss, a restart).
	// StopReason is then error and Outcome failed.
	Err error `json:"-"`
}

// New is a turn of id started at startedAt by who (nobody: the gateway's own), traced by span (nil: off).
func New(id string, startedAt time.Time, who principal.Principal, span *telemetry.Turn) *Turn {
	t := Restored(id, startedAt, nil)
	t.by, t.span = who.ID, span
	if !who.IsZero() {
		ref := who.Ref()
		t.startedBy = &ref
	}
	return t
}

// Restored is a turn a `_gateway/turn_started` frame started, as a restart or a copy reads it back.
func Restored(id string, startedAt time.Time, actor *principal.Ref) *Turn {
	return &Turn{ID: id, StartedAt: startedAt, startedBy: actor, done: make(chan struct{}), cancelCh: make(chan struct{}), asked: make(chan struct{})}
}

// Ended is a turn that ended with r, for a keyed prompt whose turn the session no longer holds.
func Ended(r TurnResult) *Turn {
	t := Restored(r.TurnID, time.Time{}, nil)
	t.result = r
	close(t.done)
	return t
}

// Done is closed when the turn has ended.
func (t *Turn) Done() <-chan struct{} { return t.done }

// Result is the turn's outcome; valid after Done is closed.
func (t *Turn) Result() TurnResult {
	<-t.done
	return t.result
}

// StartedBy is who prompted the turn, nil for the gateway's own code.
func (t *Turn) StartedBy() *principal.Ref { return t.startedBy }

// Span is the turn's trace, nil when tracing is off.
func (t *Turn) Span() *telemetry.Turn { return t.span }

// RequestCancel marks the turn cancelled and reports whether it was the first request.
func (t *Turn) RequestCancel() (first bool) {
	first = !t.cancelRequested
	t.cancelRequested = true
	t.cancelOnce.Do(func() { close(t.cancelCh) })
	return first
}

// CancelRequested reports whether a cancel was requested.
func (t *Turn) CancelRequested() bool { return t.cancelRequested }

// Cancelled is closed on the first cancel request.
func (t *Turn) Cancelled() <-chan struct{} { return t.cancelCh }

// NotifyAsked wakes the turn's waiters: one of its requests now waits for a user.
func (t *Turn) NotifyAsked() {
	close(t.asked)
	t.asked = make(chan struct{})
}

// NoteUpdate keeps what an agent's update u (params as sent) adds to the turn: its trace and its text, up
// to maxText bytes.
func (t *Turn) NoteUpdate(params json.RawMessage, u *translate.FrameUpdate, maxText int) {
	t.span.Update(params) // nil when tracing is off
	if !t.textTruncated {
		t.textTruncated = u.WriteText(&t.text, maxText)
	}
}

// WriteText adds text read back from a logged update, up to maxText bytes.
func (t *Turn) WriteText(text string, maxText int) {
	if !t.textTruncated {
		t.textTruncated = translate.WriteBoundedText(&t.text, text, maxText)
	}
}

// SetUsage records the usage the agent's answer reported.
func (t *Turn) SetUsage(u *agentusage.Turn) { t.usage = u }

// Usage is the usage the agent's answer reported, nil when none.
func (t *Turn) Usage() *agentusage.Turn { return t.usage }

// End ends the turn with r, its text and usage added, and returns the result waiters get.
func (t *Turn) End(r TurnResult) TurnResult {
	r.Text, r.Truncated = t.text.String(), t.textTruncated
	t.text.Release()
	t.result = r
	close(t.done)
	return r
}

// Payer is who a turn's spending is counted for: who prompted it, else the session's owner.
func (t *Turn) Payer(owner string) string {
	if t.by != "" {
		return t.by
	}
	return owner
}

// View is the running turn as clients see it.
func (t *Turn) View() *TurnView {
	return &TurnView{TurnID: t.ID, StartedAt: t.StartedAt, CancelRequested: t.cancelRequested}
}

// TurnView is the running turn as clients see it.
type TurnView struct {
	TurnID          string    `json:"turnId"`
	StartedAt       time.Time `json:"startedAt"`
	CancelRequested bool      `json:"cancelRequested"`
}

// LastTurnView is how the session's last turn ended, so a client that missed its `_gateway/turn_ended`
// (a curl user, a reload) still sees a failure: a failed turn has stopReason error, outcome failed and Error.
type LastTurnView struct {
	TurnID     string           `json:"turnId"`
	StopReason string           `json:"stopReason"`
	Outcome    string           `json:"turnOutcome"`
	EndedAt    time.Time        `json:"endedAt"`
	Error      map[string]any   `json:"error,omitempty"`
	Usage      *agentusage.Turn `json:"usage,omitempty"`
}

// TextCap is the capacity of the buffer that collects the turn's text, for tests.
func (t *Turn) TextCap() int { return t.text.Cap() }

// RestartTextForTest does with the turn's text what its end does (the result takes the text) once the text
// reached its bound, and starts collecting again.
func (t *Turn) RestartTextForTest() {
	if t.textTruncated {
		_ = t.text.String()
		t.text.Release()
		t.textTruncated = false
	}
}
