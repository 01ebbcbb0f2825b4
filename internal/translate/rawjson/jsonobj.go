package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrNotObject reports input that is not a single JSON object. Callers hand us bytes the SDK already parsed,
// so this only fires on programming errors or hostile input in fuzzing.
var ErrNotObject = errors.New("translate: not a JSON object")

// member is one top-level member of a JSON object: byte offsets of its key (with quotes) and its value.
type Member struct {
	KeyStart, KeyEnd int
	ValStart, ValEnd int
}

// key returns the member's raw key without quotes. Keys with escapes are returned raw; the keys we look for
// (sessionId, _meta, update, …) never need escaping, so an escaped key simply never matches.
func (m Member) Key(b []byte) []byte { return b[m.KeyStart+1 : m.KeyEnd-1] }

// value returns the member's raw value bytes.
func (m Member) Value(b []byte) []byte { return b[m.ValStart:m.ValEnd] }

// EachMember calls fn for every top-level member of the JSON object in b, in wire order, without allocating.
// It validates structure only as far as it must to find value boundaries; fn returning false stops early.
func EachMember(b []byte, fn func(m Member) bool) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return ErrNotObject
		}
		var m Member
		m.KeyStart = i
		end, err := skipString(b, i)
		if err != nil {
			return err
		}
		m.KeyEnd = end
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return ErrNotObject
		}
		i = skipSpace(b, i+1)
		m.ValStart = i
		end, err = skipValue(b, i)
		if err != nil {
			return err
		}
		m.ValEnd = end
		if !fn(m) {
			return nil
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return ErrNotObject
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return trailing(b, i+1)
		default:
			return ErrNotObject
		}
	}
}

func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return ErrNotObject
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the offset just past the string starting at b[i] == '"'. It jumps from quote to quote
// with bytes.IndexByte (vectorised) instead of walking byte by byte: a quote closes the string unless an odd
// number of backslashes precedes it. Scanning back over those backslashes stays linear overall, because the
// runs behind successive quotes are disjoint.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
	return 0, ErrNotObject
}

// skipValue returns the offset just past the JSON value starting at b[i]. Nesting is tracked with a counter,
// not recursion, so hostile depth costs nothing but a loop.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrNotObject
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, ErrNotObject
	default:
		j := i
		for j < len(b) {
			c := b[j]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			j++
		}
		if j == i {
			return 0, ErrNotObject
		}
		return j, nil
	}
}

// Lookup returns the raw value of the top-level key k, or nil.
func Lookup(b []byte, k string) []byte {
	var out []byte
	_ = EachMember(b, func(m Member) bool {
		if string(m.Key(b)) == k {
			out = m.Value(b)
			return false
		}
		return true
	})
	return out
}

// IsNull reports whether a raw value is the literal null.
func IsNull(v []byte) bool { return string(v) == "null" }

// StringBody returns the raw bytes between the quotes of a JSON string value, or false for any other value.
func StringBody(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	return v[1 : len(v)-1], true
}

// DecodeString returns the Go string of a raw JSON string value. Strings without escapes, which is nearly
// all of them, cost one allocation and no decoding.
func DecodeString(v []byte) (string, bool) {
	body, ok := StringBody(v)
	if !ok {
		return "", false
	}
	if bytes.IndexByte(body, '\\') >= 0 {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	}
	return string(body), true
}
