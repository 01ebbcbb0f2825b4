package translate

import "testing"

func TestResolveStopReason(t *testing.T) {
	tests := []struct {
		agent  string
		cancel bool
		want   string
	}{
		{"end_turn", false, "end_turn"},
		{"max_tokens", false, "max_tokens"},
		{"max_turn_requests", false, "max_turn_requests"},
		{"refusal", false, "refusal"},
		{"cancelled", false, "cancelled"},
		{"", false, "end_turn"},         // an error is content, not a protocol error
		{"exploded", false, "end_turn"}, // unknown reason from a newer agent
		// A cancel racing a terminal status: the user asked to stop, the turn ends cancelled.
		{"end_turn", true, "cancelled"},
		{"max_tokens", true, "cancelled"},
		{"refusal", true, "cancelled"},
		{"", true, "cancelled"},
		{"cancelled", true, "cancelled"},
	}
	for _, tt := range tests {
		if got := ResolveStopReason(tt.agent, tt.cancel); got != tt.want {
			t.Errorf("ResolveStopReason(%q, %v) = %q, want %q", tt.agent, tt.cancel, got, tt.want)
		}
	}
}

// TestOutcomeOf: a failed turn's stop reason is error, never end_turn, and its outcome failed; every ACP stop
// reason but cancelled is a completed turn.
func TestOutcomeOf(t *testing.T) {
	for stop, want := range map[string]string{
		"end_turn": OutcomeCompleted, "max_tokens": OutcomeCompleted, "max_turn_requests": OutcomeCompleted,
		"refusal": OutcomeCompleted, "cancelled": OutcomeCancelled, StopError: OutcomeFailed,
	} {
		if got := OutcomeOf(stop); got != want {
			t.Errorf("OutcomeOf(%q) = %q, want %q", stop, got, want)
		}
	}
}
