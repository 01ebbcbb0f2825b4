package turns

import (
	"encoding/json"
	"fmt"

	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// PromptSize is the size a prompt counts against MaxPromptBytes: its encoded content blocks.
func PromptSize(blocks []json.RawMessage) int64 {
	var n int64
	for _, b := range blocks {
		n += int64(len(b))
	}
	return n
}

// CheckPromptSize refuses blocks over limit, Config.MaxPromptBytes (0 = unlimited).
func CheckPromptSize(blocks []json.RawMessage, limit int64) error {
	if n := PromptSize(blocks); limit > 0 && n > limit {
		return fmt.Errorf("%w: prompt is %d bytes; the limit is %d", sessionerr.ErrPromptTooLarge, n, limit)
	}
	return nil
}
