package agents

import "testing"

// TestHasEnvEntry: the marker matches a whole NUL-separated entry, never a prefix or a longer value.
func TestHasEnvEntry(t *testing.T) {
	entry := []byte("ACP_GATEWAY_AGENT=abc")
	for env, want := range map[string]bool{
		"ACP_GATEWAY_AGENT=abc\x00":              true,
		"PATH=/bin\x00ACP_GATEWAY_AGENT=abc\x00": true,
		"PATH=/bin\x00ACP_GATEWAY_AGENT=abc":     true,
		"ACP_GATEWAY_AGENT=abcd\x00":             false,
		"XACP_GATEWAY_AGENT=abc\x00":             false,
		"ACP_GATEWAY_AGENT=ab\x00c\x00":          false,
		"":                                       false,
	} {
		if got := hasEnvEntry([]byte(env), entry); got != want {
			t.Errorf("hasEnvEntry(%q) = %v, want %v", env, got, want)
		}
	}
}
