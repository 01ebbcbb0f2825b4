package turntext

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/translate"
)

var _ translate.TextSink = (*Buffer)(nil)

// TestTurnTextKeepsWhatWasWritten writes pieces of every size around the piece boundary, as bytes and as
// strings, and compares the text with a strings.Builder fed the same; a released text starts empty even when
// it gets back a used piece.
func TestTurnTextKeepsWhatWasWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 3 {
		var got Buffer
		var want strings.Builder
		for i := 0; want.Len() < 3*ChunkSize+100; i++ {
			n := []int{0, 1, 255, ChunkSize - 1, ChunkSize, ChunkSize + 1, rng.IntN(4000)}[i%7]
			b := make([]byte, n)
			for j := range b {
				b[j] = byte('a' + rng.IntN(26))
			}
			if i%2 == 0 {
				got.Write(b)
			} else {
				got.WriteString(string(b))
			}
			want.Write(b)
			if got.Len() != want.Len() {
				t.Fatalf("round %d write %d: Len %d, want %d", round, i, got.Len(), want.Len())
			}
		}
		if got.String() != want.String() {
			t.Fatalf("round %d: the text differs from what was written (%d bytes)", round, want.Len())
		}
		if got.Cap() < got.Len() || got.Cap() > got.Len()+2*ChunkSize {
			t.Fatalf("round %d: holding %d bytes for %d", round, got.Cap(), got.Len())
		}
		got.Release()
		if got.Len() != 0 || got.String() != "" || got.Cap() != 0 {
			t.Fatalf("round %d: released text is %d bytes, holds %d", round, got.Len(), got.Cap())
		}
		got.WriteString("again")
		if got.String() != "again" {
			t.Fatalf("round %d: after release: %q", round, got.String())
		}
		got.Release()
	}
}

// TestTurnTextBoundCutsOnRune feeds the bound the session applies (translate.WriteBoundedText) across a piece
// boundary: the kept text stops at the limit, on a rune boundary.
func TestTurnTextBoundCutsOnRune(t *testing.T) {
	var tt Buffer
	defer tt.Release()
	limit := ChunkSize + 2
	text := strings.Repeat("é", ChunkSize) // 2 bytes each
	if translate.WriteBoundedText(&tt, "x", limit) {
		t.Fatal("one byte was cut")
	}
	if !translate.WriteBoundedText(&tt, text, limit) {
		t.Fatal("not reported as cut")
	}
	if got := tt.String(); len(got) != limit-1 || got != "x"+text[:limit-2] {
		t.Fatalf("kept %d bytes, want %d ending on a whole rune", len(got), limit-1)
	}
}
