package turns

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// ParsePrompt validates a prompt: a non-empty array of ContentBlocks, each an object with a string `type`.
func ParsePrompt(raw json.RawMessage) ([]json.RawMessage, error) {
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("%w: prompt must be an array of ACP content blocks", sessionerr.ErrBadRequest)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%w: prompt is empty", sessionerr.ErrBadRequest)
	}
	for i, b := range blocks {
		var c struct {
			Type *string `json:"type"`
		}
		if err := json.Unmarshal(b, &c); err != nil || c.Type == nil || *c.Type == "" {
			return nil, fmt.Errorf("%w: prompt[%d] is not a content block with a type", sessionerr.ErrBadRequest, i)
		}
	}
	return blocks, nil
}

// TextOf concatenates the text blocks of a prompt, for logs.
func TextOf(blocks []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range blocks {
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &c) == nil && c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}
