package agents

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestNoisePrefixEndsOnACharacter: the prefix of a long non-JSON line is cut before a character the
// noiseKeep limit would split, so a valid line is not shown with a spurious U+FFFD.
func TestNoisePrefixEndsOnACharacter(t *testing.T) {
	var got []byte
	var total int
	w := &lineWatch{onNoise: func(prefix []byte, n int) { got, total = append([]byte(nil), prefix...), n }}
	line := strings.Repeat("€", 200) // 600 bytes; noiseKeep falls inside a €
	w.scan([]byte(line + "\n"))
	if !utf8.Valid(got) || len(got) != noiseKeep/3*3 || total != len(line) {
		t.Fatalf("prefix of %d bytes (valid %v), total %d", len(got), utf8.Valid(got), total)
	}
	// A short line keeps its bytes as written, invalid ones included (the log's encoder replaces them).
	w.scan([]byte("bad \xff\n"))
	if string(got) != "bad \xff" {
		t.Fatalf("short line prefix %q", got)
	}
}
