package demo

import (
	"strings"
	"unicode"
)

// headline collapses whitespace to single spaces and keeps the first n runes,
// for one-line texts (the thought, the session title).
func headline(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}

// splitChunks cuts s into at most n non-empty pieces at word starts, so that a
// client sees the echo stream in. The pieces concatenate to s exactly.
func splitChunks(s string, n int) []string {
	var starts []int // byte offsets where a word begins
	prevSpace := true
	for i, r := range s {
		space := unicode.IsSpace(r)
		if !space && prevSpace {
			starts = append(starts, i)
		}
		prevSpace = space
	}
	if len(starts) <= 1 || n <= 1 {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	if n > len(starts) {
		n = len(starts)
	}
	// Cut before word k*len/n for k = 1..n-1; the first piece also keeps any
	// leading whitespace.
	chunks := make([]string, 0, n)
	from := 0
	for k := 1; k < n; k++ {
		at := starts[k*len(starts)/n]
		chunks = append(chunks, s[from:at])
		from = at
	}
	return append(chunks, s[from:])
}
