package agentsvc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTerminalOutputSplitRune: a character split between two reads is sent whole with the second, never as
// two U+FFFD; bytes that are not UTF-8 become U+FFFD; an incomplete sequence at EOF becomes one U+FFFD.
func TestTerminalOutputSplitRune(t *testing.T) {
	o := terminalOutput{limit: 100}
	euro := "€" // 3 bytes
	if got := o.add([]byte("a" + euro[:1])); got != "a" {
		t.Fatalf("first read gave %q", got)
	}
	if got := o.add([]byte(euro[1:] + "b\xff")); got != euro+"b\uFFFD" {
		t.Fatalf("second read gave %q", got)
	}
	if got := o.add([]byte(euro[:2])); got != "" {
		t.Fatalf("third read gave %q", got)
	}
	if got := o.flush(); got != "\uFFFD" {
		t.Fatalf("flush gave %q", got)
	}
	if string(o.text()) != "a€b\uFFFD\uFFFD" || o.truncated {
		t.Fatalf("kept %q truncated %v", o.text(), o.truncated)
	}
}

// TestTerminalOutputLimit: past the limit the start is dropped, at a character boundary, and the output says
// truncated; a limit of 0 keeps nothing.
func TestTerminalOutputLimit(t *testing.T) {
	o := terminalOutput{limit: 10}
	o.add([]byte("0123456789"))
	if o.truncated {
		t.Fatal("truncated at exactly the limit")
	}
	o.add([]byte("€€")) // 16 bytes: keep the last 10 → cut inside "5678", then whole euros
	if string(o.text()) != "6789€€" || !o.truncated {
		t.Fatalf("kept %q truncated %v", o.text(), o.truncated)
	}
	o.add([]byte("€€€€")) // 18 bytes, cut lands inside a euro: the kept text is 9 bytes
	if string(o.text()) != "€€€" || !utf8.Valid(o.text()) {
		t.Fatalf("kept %q", o.text())
	}
	z := terminalOutput{limit: 0}
	z.add([]byte("abc"))
	if len(z.text()) != 0 || !z.truncated {
		t.Fatalf("limit 0 kept %q truncated %v", z.text(), z.truncated)
	}
}

func TestTextChunks(t *testing.T) {
	text := strings.Repeat("é", 10) // 20 bytes
	chunks := textChunks(text, 5)
	if strings.Join(chunks, "") != text {
		t.Fatalf("chunks %q do not add up", chunks)
	}
	for _, c := range chunks {
		if len(c) > 5 || !utf8.ValidString(c) {
			t.Fatalf("chunk %q", c)
		}
	}
}

// TestTerminalOutputKeepsTheTail: over many reads, what is kept is always the longest tail of the whole
// output that fits the limit and starts at a character boundary.
func TestTerminalOutputKeepsTheTail(t *testing.T) {
	o := terminalOutput{limit: 37}
	var all strings.Builder
	pieces := []string{"a", "é", "€", "😀", "xyz", strings.Repeat("é", 9), "\n"}
	for i := 0; i < 500; i++ {
		p := pieces[(i*7+i/3)%len(pieces)]
		all.WriteString(o.add([]byte(p)))
		want := all.String()
		cut := max(0, len(want)-o.limit)
		for cut < len(want) && !utf8.RuneStart(want[cut]) {
			cut++
		}
		if got := string(o.text()); got != want[cut:] {
			t.Fatalf("after %d reads kept %q, want %q", i+1, got, want[cut:])
		}
		if o.truncated != (cut > 0 || all.Len() > o.limit) {
			t.Fatalf("after %d reads truncated %v", i+1, o.truncated)
		}
	}
}
