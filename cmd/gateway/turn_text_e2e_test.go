package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestPromptWaitTextBounded: `prompt?wait=true` returns at most --turn-text-max-bytes of the turn's text and
// says truncated; a turn within the bound comes back whole and not truncated.
func TestPromptWaitTextBounded(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "flood", "--turn-text-max-bytes", "100000")
	s := g.createSession(nil)
	for _, tc := range []struct {
		prompt    string
		wantLen   int
		truncated bool
	}{
		{"40 65536", 100000, true},
		{"3 1000", 3000, false},
	} {
		var res struct {
			StopReason string
			Text       string
			Truncated  *bool
		}
		if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"`+tc.prompt+`"}`, &res); code != http.StatusOK || res.StopReason != "end_turn" {
			t.Fatalf("%s: %d %+v", tc.prompt, code, res.StopReason)
		}
		if len(res.Text) != tc.wantLen || strings.Trim(res.Text, "f") != "" || res.Truncated == nil || *res.Truncated != tc.truncated {
			t.Fatalf("%s: text of %d bytes, truncated %v; want %d bytes, truncated %v", tc.prompt, len(res.Text), res.Truncated, tc.wantLen, tc.truncated)
		}
	}
}
