package sessions

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorDataBounded: an agent's error data shown to people is at most maxErrorData bytes of valid UTF-8,
// cut on a character boundary, with secrets redacted, whatever the agent sent.
func TestErrorDataBounded(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes, every cut point but one inside a character
	for _, data := range []any{long, "bad \xff\xfe bytes", map[string]any{"error": long}, "token sk-abcdefghijklmnop0123456789"} {
		got := errorData(data)
		if len(got) > maxErrorData || !utf8.ValidString(got) {
			t.Errorf("errorData: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
		}
		if strings.Contains(got, "abcdefghijklmnop0123456789") {
			t.Errorf("errorData(%q) = %q: secret not redacted", data, got)
		}
	}
	if got := errorData(long); !strings.HasSuffix(got, "…") {
		t.Errorf("a cut is not marked: ...%q", got[len(got)-8:])
	}
}
