package events

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestDocExamplesTranslate: every event line in docs/events.md's ```json blocks is one this version reads. An
// agent's events, applied in order within their block, are neither malformed, unknown, unmatched nor stale,
// and each produces what it is for; the gateway's own lines (prompt, cancel, permission_decision) are JSON.
func TestDocExamplesTranslate(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	toAgent := map[string]bool{TypePrompt: true, TypeCancel: true, TypePermissionDecision: true}
	lines := 0
	for _, block := range strings.Split(string(raw), "\n```json\n")[1:] {
		block, _, _ = strings.Cut(block, "\n```\n")
		c := NewContext(Config{SessionID: "s", Cwd: "/w"})
		for _, line := range strings.Split(block, "\n") {
			var head struct{ Type string }
			if json.Unmarshal([]byte(line), &head) == nil && toAgent[head.Type] {
				lines++ // the gateway's own line: the agent reads it, DecodeEvent does not
				continue
			}
			ev, err := DecodeEvent([]byte(line))
			if err != nil {
				if bytes.Contains([]byte(line), []byte(`"type"`)) {
					t.Errorf("docs/events.md: %s: %v", line, err)
				}
				continue // a block that is not events (an ACP frame, a response)
			}
			lines++
			if !c.TurnRunning() {
				id := ev.TurnID
				if id == "" {
					id = "turn-1"
				}
				c.BeginTurn(id)
			}
			before := c.Stats()
			res := c.Apply(ev)
			if after := c.Stats(); after != before || res.Malformed {
				t.Errorf("docs/events.md: %s: not read as documented (stats %+v → %+v)", line, before, after)
			}
			// A final message repeating the streamed text adds nothing (deduplicated, as the page says).
			if len(res.Updates) == 0 && res.Permission == nil && !res.Done && ev.Type != TypeRecurse && ev.Type != TypeAssistantMessage {
				t.Errorf("docs/events.md: %s: produced nothing", line)
			}
		}
	}
	if lines < 20 {
		t.Fatalf("read %d event lines in docs/events.md; the blocks moved", lines)
	}
}
