package core

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// FuzzCleanTitle feeds arbitrary titles to the rename check: it refuses with ErrBadRequest, or answers a
// trimmed title of 1 to MaxTitleRunes characters of valid UTF-8 without control characters, which the check
// accepts again unchanged.
func FuzzCleanTitle(f *testing.F) {
	f.Add("Refactor the parser")
	f.Add("  padded \t")
	f.Add("")
	f.Add("   ")
	f.Add("line\nbreak")
	f.Add("esc\x1b[31mred")
	f.Add("nul\x00")
	f.Add("\xff\xfe")
	f.Add("bidi \u202egnp.exe")
	f.Add("del\u007f")
	f.Add("nel\u0085")
	f.Add(strings.Repeat("é", MaxTitleRunes+1))
	f.Fuzz(func(t *testing.T, title string) {
		got, err := cleanTitle(title)
		if err != nil {
			if !errors.Is(err, sessionerr.ErrBadRequest) {
				t.Fatalf("error %v is not ErrBadRequest", err)
			}
			return
		}
		switch {
		case got == "" || got != strings.TrimSpace(got):
			t.Fatalf("title %q not trimmed or empty", got)
		case !utf8.ValidString(got) || utf8.RuneCountInString(got) > MaxTitleRunes:
			t.Fatalf("title %q invalid or too long", got)
		case strings.IndexFunc(got, unicode.IsControl) >= 0:
			t.Fatalf("title %q holds a control character", got)
		case !strings.Contains(title, got):
			t.Fatalf("title %q is not a part of %q", got, title)
		}
		if again, err := cleanTitle(got); err != nil || again != got {
			t.Fatalf("clean title %q not accepted as is: %q, %v", got, again, err)
		}
	})
}
