package main

import (
	"io"
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

// TestTurnTextMaxBytesFlag: the bound is read from the flag or GATEWAY_TURN_TEXT_MAX_BYTES; a bound below 1
// is refused with an error that names the flag.
func TestTurnTextMaxBytesFlag(t *testing.T) {
	env := map[string]string{"GATEWAY_TURN_TEXT_MAX_BYTES": "4096"}
	c, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || c.turnTextMaxBytes != 4096 {
		t.Fatalf("from the environment: %v %+v", err, c)
	}
	for _, v := range []string{"0", "-1"} {
		if _, err := parseConfig([]string{"--turn-text-max-bytes", v}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "--turn-text-max-bytes") {
			t.Fatalf("--turn-text-max-bytes %s: %v", v, err)
		}
	}
}
