package agentusage

import (
	"encoding/json"
	"testing"
)

// TestOfPrompt: a prompt answer's usage is read when it has the three required counts; none is nil and ok,
// a malformed one nil and not ok (the agent is untrusted).
func TestOfPrompt(t *testing.T) {
	for in, want := range map[string]struct {
		total uint64
		some  bool
		ok    bool
	}{
		`{"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7,"thoughtTokens":1}}`: {7, true, true},
		`{"stopReason":"end_turn"}`:                    {0, false, true},
		`{"usage":null}`:                               {0, false, true},
		`{"usage":{"inputTokens":3,"outputTokens":4}}`: {0, false, false},
		`{"usage":"lots"}`:                             {0, false, false},
	} {
		u, ok := OfPrompt(json.RawMessage(in))
		if ok != want.ok || (u != nil) != want.some || u != nil && u.TotalTokens != want.total {
			t.Errorf("%s: %+v %v, want total %d (some %v) ok %v", in, u, ok, want.total, want.some, want.ok)
		}
	}
}

// TestReportedCost: a usage_update's cost counts only with a finite, non-negative amount.
func TestReportedCost(t *testing.T) {
	if c, a, ok := ReportedCost([]byte(`{"update":{"cost":{"amount":1.5,"currency":"USD"}}}`)); !ok || c != "USD" || a != 1.5 {
		t.Errorf("a cost of 1.5 USD: %q %v %v", c, a, ok)
	}
	for _, in := range []string{`{"update":{}}`, `{"update":{"cost":{"currency":"USD"}}}`, `{"update":{"cost":{"amount":-1,"currency":"USD"}}}`, `nope`} {
		if _, _, ok := ReportedCost([]byte(in)); ok {
			t.Errorf("%s: counted as a cost", in)
		}
	}
}
