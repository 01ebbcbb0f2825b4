package turns

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
)

// TestPromptKeysForgetOldestFirst: a session remembers MaxPromptKeys keyed prompts; the next one makes it
// forget the oldest, and an ended turn keeps how it ended without its text.
func TestPromptKeysForgetOldestFirst(t *testing.T) {
	var ks Keys
	who := principal.Principal{ID: "ann"}
	blocks := []json.RawMessage{json.RawMessage(`{"type":"text","text":"hi"}`)}
	for i := 0; i <= MaxPromptKeys; i++ {
		ks.Add(promptkey.New(who, fmt.Sprint("k", i), blocks), fmt.Sprint("t", i))
	}
	if len(ks) != MaxPromptKeys || ks.find(promptkey.New(who, "k0", blocks).Key) != nil || ks.find(promptkey.New(who, "k1", blocks).Key) == nil {
		t.Fatalf("after %d keys: %d remembered, the first still there: %v", MaxPromptKeys+1, len(ks), ks.find(promptkey.New(who, "k0", blocks).Key) != nil)
	}
	ks.Ended(TurnResult{TurnID: "t1", StopReason: "end_turn", Text: "long text"})
	if r := ks.find(promptkey.New(who, "k1", blocks).Key).result; r == nil || r.StopReason != "end_turn" || r.Text != "" {
		t.Fatalf("the ended turn's record: %+v", r)
	}
}
