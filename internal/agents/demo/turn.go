package demo

import (
	"context"
	"path/filepath"
	"strconv"
	"time"

	"github.com/coder/acp-go-sdk"
)

// Closing texts of a full turn, exported so that tests elsewhere can compute
// the expected message text ("You said: " + prompt text + closing).
const (
	ClosingApplied    = "\n\nDone. Here is a snippet:\n\n```go\nfmt.Println(\"hello\")\n```\n"
	ClosingNotApplied = "\n\nThe edit was not applied."
)

// helpText answers the "/help" command.
const helpText = "I am the demo agent. I echo your prompt, pretend to read README.md and " +
	"ask before pretending to edit notes.md. Say \"quick\" for a short turn, " +
	"\"/echo <text>\" to have <text> repeated, or \"/ask\" for a question."

// Made-up content of the demo files; nothing is read from or written to disk.
const (
	readmeContent = "# Demo project\n\nThis README was made up by the demo agent; no file was read.\n"
	oldNotesLine  = "old line\n"
	newNotesLine  = "new line\n"
	contextSize   = 200000
)

// turn is one session/prompt being answered. It is owned by the goroutine
// running the prompt handler.
type turn struct {
	ctx   context.Context // Cancelled by session/cancel or shutdown.
	conn  *acp.AgentSideConnection
	sid   acp.SessionId
	delay time.Duration
	sent  int // Updates sent so far; the first one is not delayed.

	n     int    // Turn number in the session, from 1.
	cwd   string // Session cwd, for the made-up paths.
	text  string // Prompt text.
	title string // Session title to announce; empty: none.
	used  int    // Context tokens to report.

	titleSent bool // Set once the session_info_update went out.
}

// pause waits for the configured delay or until the turn is cancelled. With
// no delay it only checks for cancellation, so a cancelled turn never sends
// another update.
func (t *turn) pause() error {
	if t.delay <= 0 {
		return t.ctx.Err()
	}
	timer := time.NewTimer(t.delay)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
		return t.ctx.Err()
	case <-timer.C:
		return nil
	}
}

// send is one step of the turn: pause (except before the first update), then
// send the update.
func (t *turn) send(u acp.SessionUpdate) error {
	if t.sent > 0 {
		if err := t.pause(); err != nil {
			return err
		}
	} else if err := t.ctx.Err(); err != nil {
		return err
	}
	t.sent++
	return t.conn.SessionUpdate(t.ctx, acp.SessionNotification{SessionId: t.sid, Update: u})
}

// sendAll sends updates in order, stopping at the first error.
func (t *turn) sendAll(us ...acp.SessionUpdate) error {
	for _, u := range us {
		if err := t.send(u); err != nil {
			return err
		}
	}
	return nil
}

// reply answers a command with a single message chunk.
func (t *turn) reply(text string) error {
	return t.send(acp.UpdateAgentMessageText(text))
}

// echo sends the thought and the echoed prompt: the part every turn but the
// commands shares.
func (t *turn) echo() error {
	us := []acp.SessionUpdate{
		acp.UpdateAgentThoughtText("Thinking about: " + headline(t.text, 60)),
		acp.UpdateAgentMessageText("You said: "),
	}
	for _, c := range splitChunks(t.text, 3) {
		us = append(us, acp.UpdateAgentMessageText(c))
	}
	return t.sendAll(us...)
}

// full runs the whole scripted turn documented in the package comment.
func (t *turn) full() error {
	if err := t.echo(); err != nil {
		return err
	}
	readID := acp.ToolCallId("read_" + strconv.Itoa(t.n))
	readme := filepath.Join(t.cwd, "README.md")
	err := t.sendAll(
		plan(acp.PlanEntryStatusInProgress, acp.PlanEntryStatusPending, acp.PlanEntryStatusPending),
		acp.StartToolCall(readID, "Read README.md",
			acp.WithStartKind(acp.ToolKindRead),
			acp.WithStartStatus(acp.ToolCallStatusPending),
			acp.WithStartLocations([]acp.ToolCallLocation{{Path: readme}}),
			acp.WithStartRawInput(map[string]any{"path": readme})),
		acp.UpdateToolCall(readID, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)),
		acp.UpdateToolCall(readID,
			acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(readmeContent))})),
		plan(acp.PlanEntryStatusCompleted, acp.PlanEntryStatusInProgress, acp.PlanEntryStatusPending),
	)
	if err != nil {
		return err
	}

	applied, err := t.edit()
	if err != nil {
		return err
	}

	closing := ClosingNotApplied
	if applied {
		closing = ClosingApplied
	}
	us := []acp.SessionUpdate{
		plan(acp.PlanEntryStatusCompleted, acp.PlanEntryStatusCompleted, acp.PlanEntryStatusInProgress),
		{UsageUpdate: &acp.SessionUsageUpdate{Used: t.used, Size: contextSize, Cost: &acp.Cost{Amount: 0, Currency: "USD"}}},
	}
	if t.title != "" {
		us = append(us, acp.SessionUpdate{SessionInfoUpdate: &acp.SessionSessionInfoUpdate{Title: acp.Ptr(t.title)}})
	}
	if err := t.sendAll(us...); err != nil {
		return err
	}
	t.titleSent = t.title != ""
	return t.sendAll(
		acp.UpdateAgentMessageText(closing),
		plan(acp.PlanEntryStatusCompleted, acp.PlanEntryStatusCompleted, acp.PlanEntryStatusCompleted),
	)
}

// edit announces the edit tool call, asks for permission and reports the
// outcome. It reports whether the edit was applied.
func (t *turn) edit() (bool, error) {
	editID := acp.ToolCallId("edit_" + strconv.Itoa(t.n))
	notes := filepath.Join(t.cwd, "notes.md")
	title := "Edit notes.md"
	locations := []acp.ToolCallLocation{{Path: notes}}
	diff := []acp.ToolCallContent{acp.ToolDiffContent(notes, newNotesLine, oldNotesLine)}
	err := t.send(acp.StartToolCall(editID, title,
		acp.WithStartKind(acp.ToolKindEdit),
		acp.WithStartStatus(acp.ToolCallStatusPending),
		acp.WithStartLocations(locations),
		acp.WithStartContent(diff),
		acp.WithStartRawInput(map[string]any{"path": notes, "oldText": oldNotesLine, "newText": newNotesLine})))
	if err != nil {
		return false, err
	}
	if err := t.pause(); err != nil {
		return false, err
	}

	offered := permissionOptions()
	resp, err := t.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{
		SessionId: t.sid,
		ToolCall: acp.ToolCallUpdate{
			ToolCallId: editID,
			Title:      acp.Ptr(title),
			Kind:       acp.Ptr(acp.ToolKindEdit),
			Status:     acp.Ptr(acp.ToolCallStatusPending),
			Content:    diff,
			Locations:  locations,
		},
		Options: offered,
	})
	if t.ctx.Err() != nil {
		return false, t.ctx.Err()
	}
	v := judge(offered, resp, err)
	if v.cancelled {
		return false, errPermissionCancelled
	}

	update := acp.UpdateToolCall(editID,
		acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateRawOutput(map[string]any{"applied": true}))
	if !v.allowed {
		update = acp.UpdateToolCall(editID,
			acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateRawOutput(map[string]any{"applied": false, "reason": v.reason}))
	}
	return v.allowed, t.send(update)
}

// plan is the turn's three-step plan with the given statuses. Every plan
// update carries the complete list, as ACP requires.
func plan(read, edit, summary acp.PlanEntryStatus) acp.SessionUpdate {
	return acp.UpdatePlan(
		acp.PlanEntry{Content: "Read README.md", Priority: acp.PlanEntryPriorityHigh, Status: read},
		acp.PlanEntry{Content: "Propose an edit to notes.md", Priority: acp.PlanEntryPriorityMedium, Status: edit},
		acp.PlanEntry{Content: "Summarise the changes", Priority: acp.PlanEntryPriorityLow, Status: summary},
	)
}
