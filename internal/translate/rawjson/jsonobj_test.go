package rawjson

import (
	"strings"
	"testing"
)

// skipStringBytewise is the byte-at-a-time scanner skipString replaced; the fuzz test holds them equal.
func skipStringBytewise(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, ErrNotObject
}

func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"a\\"b"`, `"\\\\\"x\\"`, `"abc`, `"a\`, `"\"`, `"\\"`, `"` + strings.Repeat(`\\`, 40) + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			b = append([]byte{'"'}, b...)
		}
		e1, err1 := skipString(b, 0)
		e2, err2 := skipStringBytewise(b, 0)
		if e1 != e2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: skipString %d %v, bytewise %d %v", b, e1, err1, e2, err2)
		}
	})
}
