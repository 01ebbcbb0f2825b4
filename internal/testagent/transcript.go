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
func (a *agent) transcriptTurn(ctx context.Context, sid acp.SessionId, text string) (acp.PromptResponse, error) {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || n < 0 {
		return acp.PromptResponse{}, fmt.Errorf("transcript mode: prompt %q is not a count of messages", text)
	}
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
