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
