package main

import (
	"context"
	"encoding/json"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// elicitTurn is the elicit mode's turn: it asks the client a question with `elicitation/create` and reports
// the answer in one message chunk ("elicited <action> <content JSON>"), then ends the turn. The prompt text
// chooses the question: "url" asks the user to visit a login page (elicitationId "login-1") and, once
// accepted, sends `elicitation/complete` for it; anything else asks the form of elicitForm. A client whose
// initialize did not advertise the mode gets "elicited unsupported" without a question.
func (a *agent) elicitTurn(ctx context.Context, sid acp.SessionId, text string) (acp.PromptResponse, error) {
	bg := context.Background()
	url := strings.TrimSpace(text) == "url"
	a.mu.Lock()
	var caps acp.ClientCapabilities
	_ = json.Unmarshal([]byte(a.clientCaps), &caps)
	a.mu.Unlock()
	if caps.Elicitation == nil || url && caps.Elicitation.Url == nil || !url && caps.Elicitation.Form == nil {
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("elicited unsupported"))
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	req := acp.NewUnstableCreateElicitationRequestForm(elicitForm)
	req.Form.Message = "Tell me about you"
	if url {
		req = acp.NewUnstableCreateElicitationRequestUrl("login-1", "https://login.example.com/device?code=ABCD")
		req.Url.Message = "Log in to the example service"
	}
	resp, err := a.conn.UnstableCreateElicitation(ctx, req)
	if ctx.Err() != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	report := "elicited error"
	switch {
	case err != nil:
	case resp.Accept != nil:
		content, _ := json.Marshal(resp.Accept.Content)
		report = "elicited accept " + string(content)
		if url {
			_ = a.conn.UnstableCompleteElicitation(bg, acp.UnstableCompleteElicitationNotification{ElicitationId: "login-1"})
		}
	case resp.Decline != nil:
		report = "elicited decline"
	case resp.Cancel != nil:
		report = "elicited cancel"
	}
	_ = a.update(bg, sid, acp.UpdateAgentMessageText(report))
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// elicitForm is the elicit mode's form: every primitive type, titles, defaults, bounds and required fields.
var elicitForm = acp.UnstableElicitationSchema{
	Type: acp.UnstableElicitationSchemaTypeObject,
	Properties: map[string]any{
		"name":      map[string]any{"type": "string", "title": "Your name", "minLength": 1, "maxLength": 40},
		"age":       map[string]any{"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
		"height":    map[string]any{"type": "number", "title": "Height (m)", "default": 1.7},
		"subscribe": map[string]any{"type": "boolean", "title": "Subscribe", "default": true},
		"colour":    map[string]any{"type": "string", "title": "Colour", "enum": []string{"red", "green", "blue"}, "default": "green"},
	},
	Required: []string{"name", "colour"},
}
