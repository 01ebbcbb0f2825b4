package agents

import "testing"

func TestTailBufferKeepsTheLastBytes(t *testing.T) {
	b := NewTailBuffer(5)
	for _, w := range []string{"ab", "cd", "efg"} {
		if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := b.String(); got != "cdefg" {
		t.Errorf("String = %q, want %q", got, "cdefg")
	}
	if got := b.Tail(2); got != "fg" {
		t.Errorf("Tail(2) = %q, want %q", got, "fg")
	}
	if got := b.Tail(100); got != "cdefg" {
		t.Errorf("Tail(100) = %q, want %q", got, "cdefg")
	}
	// A write of exactly max bytes, and one longer, replace everything.
	_, _ = b.Write([]byte("12345"))
	if got := b.String(); got != "12345" {
		t.Errorf("after a max-sized write: %q", got)
	}
	_, _ = b.Write([]byte("abcdefgh"))
	if got := b.String(); got != "defgh" {
		t.Errorf("after a long write: %q", got)
	}
}

// TestTailBufferIsValidUTF8: a tail never starts inside a character the cut split, and invalid bytes the
// agent wrote come back as U+FFFD.
func TestTailBufferIsValidUTF8(t *testing.T) {
	b := NewTailBuffer(5)
	_, _ = b.Write([]byte("€€")) // 6 bytes: the kept tail starts inside the first €
	if got := b.String(); got != "€" {
		t.Errorf("String = %q, want %q", got, "€")
	}
	_, _ = b.Write([]byte("a\xff"))
	if got := b.String(); got != "€a\uFFFD" {
		t.Errorf("String = %q, want %q", got, "€a\uFFFD")
	}
	if got := b.Tail(3); got != "a\uFFFD" { // starts inside the €
		t.Errorf("Tail(3) = %q, want %q", got, "a\uFFFD")
	}
	if got := b.Tail(2); got != "a\uFFFD" {
		t.Errorf("Tail(2) = %q, want %q", got, "a\uFFFD")
	}
}
