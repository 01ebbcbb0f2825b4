package promptkey

import (
	"encoding/json"
	"testing"

	"github.com/acp-gateway/gateway/internal/principal"
)

// TestKeyScope: a key is its sender's; the prompt's digest ignores JSON whitespace only.
func TestKeyScope(t *testing.T) {
	blocks := []json.RawMessage{json.RawMessage(`{"type":"text","text":"hi"}`)}
	spaced := []json.RawMessage{json.RawMessage(`{ "type": "text", "text": "hi" }`)}
	other := []json.RawMessage{json.RawMessage(`{"type":"text","text":"ho"}`)}
	ann, bob := principal.Principal{ID: "ann"}, principal.Principal{ID: "bob"}
	if New(ann, "k", blocks).Key == New(bob, "k", blocks).Key {
		t.Fatal("two principals' equal keys are one key")
	}
	if New(ann, "k", blocks) != New(ann, "k", spaced) {
		t.Fatal("whitespace changed the prompt's digest")
	}
	if New(ann, "k", blocks).Prompt == New(ann, "k", other).Prompt {
		t.Fatal("two prompts have one digest")
	}
	if New(ann, "", blocks) != (Key{}) {
		t.Fatal("no key is a key")
	}
}
