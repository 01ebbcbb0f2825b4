package main

import (
	"context"
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"
)

// usageStep is the usage mode's prompt text: what the turn reports. Cost is the session's cumulative cost,
// as ACP's usage_update carries it; Usage is the turn's own token usage, PromptResponse.usage.
type usageStep struct {
	Cost  *acp.Cost  `json:"cost"`
	Usage *acp.Usage `json:"usage"`
}

// usageTurn sends a usage_update (context 1000 of 200000 tokens, the step's cost when it has one), a message
// chunk, and ends the turn with the step's usage. A prompt that is not a step ends the turn with no usage.
func (a *agent) usageTurn(ctx context.Context, sid acp.SessionId, text string) (acp.PromptResponse, error) {
	var st usageStep
	if err := json.Unmarshal([]byte(text), &st); err != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	u := acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{Used: 1000, Size: 200000, Cost: st.Cost}}
	if err := a.update(ctx, sid, u); err != nil {
		return acp.PromptResponse{}, err
	}
	if err := a.update(ctx, sid, acp.UpdateAgentMessageText("counted")); err != nil {
		return acp.PromptResponse{}, err
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn, Usage: st.Usage}, nil
}
