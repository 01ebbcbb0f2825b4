package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// transcriptTurn is the transcript mode's turn: the prompt text is "N", and the turn writes N agent messages, each
// a few lines of Markdown followed by a completed edit tool call with a diff, then ends (end_turn). A tool call
// ends the message before it, so the gateway gives each message an id of its own; a browser test builds a
// session of thousands of messages in a few prompts.
//
// "hold N" starts an in_progress edit tool call "held" first, writes the N messages, then asks permission for
// "held" and completes it with a diff once allowed (fails it otherwise): a call whose card comes long before
// its permission and its end, as a snapshot's window can cut it.
func (a *agent) transcriptTurn(ctx context.Context, sid acp.SessionId, text string) (acp.PromptResponse, error) {
	count, hold := strings.CutPrefix(strings.TrimSpace(text), "hold ")
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		return acp.PromptResponse{}, fmt.Errorf("transcript mode: prompt %q is not a count of messages", text)
	}
	if !hold {
		return a.transcriptMessages(ctx, sid, n)
	}
	const held = acp.ToolCallId("held")
	path := "/work/held.go"
	if err := a.update(ctx, sid, acp.StartToolCall(held, "Edit "+path, acp.WithStartKind(acp.ToolKindEdit),
		acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartLocations([]acp.ToolCallLocation{{Path: path}}))); err != nil {
		return acp.PromptResponse{}, err
	}
	if resp, err := a.transcriptMessages(ctx, sid, n); err != nil {
		return resp, err
	}
	resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: sid,
		ToolCall:  acp.ToolCallUpdate{ToolCallId: held, Title: acp.Ptr("Edit " + path), Kind: acp.Ptr(acp.ToolKindEdit)},
		Options: []acp.PermissionOption{
			{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		return acp.PromptResponse{}, err
	}
	if resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionId != "allow" {
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, a.update(ctx, sid, acp.UpdateToolCall(held, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
	}
	err = a.update(ctx, sid, acp.UpdateToolCall(held, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolDiffContent(path, "package p\n\nconst held = true\n", "package p\n")})))
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, err
}

// transcriptMessages writes n messages, each followed by a completed edit tool call with a diff, and ends the turn.
func (a *agent) transcriptMessages(ctx context.Context, sid acp.SessionId, n int) (acp.PromptResponse, error) {
	for i := 0; i < n; i++ {
		a.mu.Lock()
		a.written++
		k := a.written
		a.mu.Unlock()
		body := fmt.Sprintf("Message **%d**: the change to `file%d.go`.\n\n- first point of %d\n- second point\n\n```go\nfunc f%d() int { return %d }\n```\n", k, k, k, k, k)
		if err := a.update(ctx, sid, acp.UpdateAgentMessageText(body)); err != nil {
			return acp.PromptResponse{}, err
		}
		path := fmt.Sprintf("/work/file%d.go", k)
		id := acp.ToolCallId("edit_" + strconv.Itoa(k))
		if err := a.update(ctx, sid, acp.StartToolCall(id, "Edit "+path,
			acp.WithStartKind(acp.ToolKindEdit), acp.WithStartStatus(acp.ToolCallStatusCompleted),
			acp.WithStartLocations([]acp.ToolCallLocation{{Path: path}}),
			acp.WithStartContent([]acp.ToolCallContent{acp.ToolDiffContent(path, fmt.Sprintf("package p\n\nfunc f%d() int { return %d }\n", k, k), "package p\n")}))); err != nil {
			return acp.PromptResponse{}, err
		}
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}
