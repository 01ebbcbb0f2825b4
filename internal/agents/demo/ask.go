package demo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coder/acp-go-sdk"
)

// askForm is what "/ask" asks: a required name and a colour with a default.
var askForm = acp.UnstableElicitationSchema{
	Type: acp.UnstableElicitationSchemaTypeObject,
	Properties: map[string]any{
		"name":   map[string]any{"type": "string", "title": "Your name", "minLength": 1},
		"colour": map[string]any{"type": "string", "title": "Favourite colour", "enum": []string{"red", "green", "blue"}, "default": "green"},
	},
	Required: []string{"name"},
}

// ask runs "/ask": one form elicitation, then one agent_message_chunk saying what came back ("You answered:
// colour=green, name=Ann", "You declined.", "You cancelled." or "No answer: <error>").
func (t *turn) ask() error {
	req := acp.NewUnstableCreateElicitationRequestForm(askForm)
	req.Form.Message = "The demo agent would like to know you"
	resp, err := t.conn.UnstableCreateElicitation(t.ctx, req)
	if t.ctx.Err() != nil {
		return t.ctx.Err()
	}
	return t.reply(answerText(resp, err))
}

func answerText(resp acp.UnstableCreateElicitationResponse, err error) string {
	switch {
	case err != nil:
		return "No answer: " + err.Error()
	case resp.Decline != nil:
		return "You declined."
	case resp.Cancel != nil:
		return "You cancelled."
	case resp.Accept == nil:
		return "No answer."
	}
	parts := make([]string, 0, len(resp.Accept.Content))
	for k, v := range resp.Accept.Content {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(parts)
	return "You answered: " + strings.Join(parts, ", ")
}
