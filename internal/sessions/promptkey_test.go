package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/principal"
)

// TestPromptKeysForgetOldestFirst: a session remembers MaxPromptKeys keyed prompts; the next one makes it
// forget the oldest, and an ended turn keeps how it ended without its text.
func TestPromptKeysForgetOldestFirst(t *testing.T) {
	var ks promptKeys
	who := principal.Principal{ID: "ann"}
	blocks := []json.RawMessage{json.RawMessage(`{"type":"text","text":"hi"}`)}
	for i := 0; i <= MaxPromptKeys; i++ {
		ks.add(newPromptKey(who, fmt.Sprint("k", i), blocks), fmt.Sprint("t", i))
	}
	if len(ks) != MaxPromptKeys || ks.find(newPromptKey(who, "k0", blocks).Key) != nil || ks.find(newPromptKey(who, "k1", blocks).Key) == nil {
		t.Fatalf("after %d keys: %d remembered, the first still there: %v", MaxPromptKeys+1, len(ks), ks.find(newPromptKey(who, "k0", blocks).Key) != nil)
	}
	ks.ended(TurnResult{TurnID: "t1", StopReason: "end_turn", Text: "long text"})
	if r := ks.find(newPromptKey(who, "k1", blocks).Key).result; r == nil || r.StopReason != "end_turn" || r.Text != "" {
		t.Fatalf("the ended turn's record: %+v", r)
	}
}

// TestPromptKeyScope: a key is its sender's; the prompt's digest ignores JSON whitespace only.
func TestPromptKeyScope(t *testing.T) {
	blocks := []json.RawMessage{json.RawMessage(`{"type":"text","text":"hi"}`)}
	spaced := []json.RawMessage{json.RawMessage(`{ "type": "text", "text": "hi" }`)}
	other := []json.RawMessage{json.RawMessage(`{"type":"text","text":"ho"}`)}
	ann, bob := principal.Principal{ID: "ann"}, principal.Principal{ID: "bob"}
	if newPromptKey(ann, "k", blocks).Key == newPromptKey(bob, "k", blocks).Key {
		t.Fatal("two principals' equal keys are one key")
	}
	if newPromptKey(ann, "k", blocks) != newPromptKey(ann, "k", spaced) {
		t.Fatal("whitespace changed the prompt's digest")
	}
	if newPromptKey(ann, "k", blocks).Prompt == newPromptKey(ann, "k", other).Prompt {
		t.Fatal("two prompts have one digest")
	}
	if newPromptKey(ann, "", blocks) != (promptKey{}) {
		t.Fatal("no key is a key")
	}
}

func TestCheckIdempotencyKey(t *testing.T) {
	for _, ok := range []string{"a", "550e8400-e29b-41d4-a716-446655440000", "with space ~", strings.Repeat("k", MaxIdempotencyKeyLen)} {
		if err := CheckIdempotencyKey(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("k", MaxIdempotencyKeyLen+1), "tab\there", "ключ", "nul\x00"} {
		if err := CheckIdempotencyKey(bad); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%q: %v, want ErrBadRequest", bad, err)
		}
	}
}
