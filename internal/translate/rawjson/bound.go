package rawjson

import (
	"strconv"
)

// Payload bounds. A tool call's content, rawInput, rawOutput and its update-level _meta (claude-agent-acp
// copies the whole tool response into `_meta.claudeCode.toolResponse`) are each bounded to
// translate.Config.MaxFieldBytes. The cut keeps the field's shape so a client renders what is left as it
// would the whole: long strings are shortened with an in-string marker, arrays past the budget lose their tail
// elements (replaced by one marker element), objects keep all their members. Strings of up to
// shortStringBytes are never cut, so enum values and ids stay intact. Every marker says what was cut and by
// how much, e.g. `…[gateway: truncated 483112 bytes]`.
//
// The walk is one pass over the input with an explicit stack (no recursion, so hostile nesting costs a
// byte per level). When a pathological shape (say a million tiny object members) would still exceed
// hardBound after the soft cut, the whole field is replaced by a fixed marker of the right type instead.

type Shape uint8

const (
	ShapeAny     Shape = iota // rawInput, rawOutput: any JSON value
	ShapeContent              // content: ToolCallContent[]
	ShapeObject               // _meta: an object
)

const shortStringBytes = 64

// secretRunBackoff is how far a cut backs off to the start of a token-like run, so a secret straddling the cut
// is dropped whole instead of leaving a prefix that is too short for the redactor to recognise.
const secretRunBackoff = 128

func hardBound(max int) int { return 2*max + 1024 }

// Bound returns v bounded to about max bytes and whether anything was cut. v itself is returned when it
// fits; max <= 0 means unbounded.
func Bound(v []byte, max int, shape Shape) ([]byte, bool) {
	if max <= 0 || len(v) <= max {
		return v, false
	}
	b := bounder{src: v, max: max, hard: hardBound(max), out: make([]byte, 0, max+128)}
	if !b.run(shape == ShapeContent) {
		return fallbackField(v, shape), true
	}
	return b.out, b.cut
}

func fallbackField(v []byte, shape Shape) []byte {
	n := strconv.Itoa(len(v))
	switch shape {
	case ShapeContent:
		return []byte(`[{"type":"content","content":{"type":"text","text":"[gateway: truncated ` + n + ` bytes]"}}]`)
	case ShapeObject:
		return []byte(`{"gateway":{"truncatedBytes":` + n + `}}`)
	default:
		return []byte(`"[gateway: truncated ` + n + ` bytes]"`)
	}
}

type bounder struct {
	src  []byte
	out  []byte
	max  int
	hard int
	cut  bool
}

func (b *bounder) exhausted() bool { return len(b.out) >= b.max }

// run copies src into out compactly, cutting as described above. It returns false on malformed input or when
// the output would pass the hard bound.
func (b *bounder) run(content bool) bool {
	const (
		wantValue = iota
		wantKey
		afterValue
	)
	src := b.src
	var stack []byte
	state := wantValue
	i := 0
	for {
		if len(b.out) > b.hard {
			return false
		}
		i = skipSpace(src, i)
		if i >= len(src) {
			return state == afterValue && len(stack) == 0
		}
		switch state {
		case wantKey:
			if src[i] != '"' {
				return false
			}
			end, err := skipString(src, i)
			if err != nil {
				return false
			}
			b.out = append(b.out, src[i:end]...)
			i = skipSpace(src, end)
			if i >= len(src) || src[i] != ':' {
				return false
			}
			b.out = append(b.out, ':')
			i++
			state = wantValue
		case wantValue:
			switch src[i] {
			case '"':
				end, err := skipString(src, i)
				if err != nil {
					return false
				}
				b.appendString(src[i+1 : end-1])
				i, state = end, afterValue
			case '{':
				b.out = append(b.out, '{')
				i = skipSpace(src, i+1)
				if i < len(src) && src[i] == '}' {
					b.out = append(b.out, '}')
					i, state = i+1, afterValue
				} else {
					stack = append(stack, '{')
					state = wantKey
				}
			case '[':
				b.out = append(b.out, '[')
				i = skipSpace(src, i+1)
				switch {
				case i < len(src) && src[i] == ']':
					b.out = append(b.out, ']')
					i, state = i+1, afterValue
				case b.exhausted():
					var ok bool
					if i, ok = b.dropRest(i, content && len(stack) == 0, false); !ok {
						return false
					}
					state = afterValue
				default:
					stack = append(stack, '[')
				}
			case '}', ']', ',', ':':
				return false
			default:
				end, err := skipValue(src, i)
				if err != nil {
					return false
				}
				b.out = append(b.out, src[i:end]...)
				i, state = end, afterValue
			}
		case afterValue:
			if len(stack) == 0 {
				return false // trailing data
			}
			top := stack[len(stack)-1]
			switch src[i] {
			case ',':
				i = skipSpace(src, i+1)
				if top == '{' {
					b.out = append(b.out, ',')
					state = wantKey
					break
				}
				if !b.exhausted() {
					b.out = append(b.out, ',')
					state = wantValue
					break
				}
				stack = stack[:len(stack)-1]
				var ok bool
				if i, ok = b.dropRest(i, content && len(stack) == 0, true); !ok {
					return false
				}
			case '}', ']':
				want := byte('{')
				if src[i] == ']' {
					want = '['
				}
				if top != want {
					return false
				}
				b.out = append(b.out, src[i])
				stack = stack[:len(stack)-1]
				i++
			default:
				return false
			}
		}
	}
}

// dropRest skips the remaining elements of an array from src[i] (at an element) through its closing bracket,
// writes one marker element and the bracket, and returns the offset after it.
func (b *bounder) dropRest(i int, contentItems, comma bool) (int, bool) {
	n := 0
	for {
		end, err := skipValue(b.src, i)
		if err != nil {
			return 0, false
		}
		n++
		i = skipSpace(b.src, end)
		if i >= len(b.src) {
			return 0, false
		}
		if b.src[i] == ']' {
			break
		}
		if b.src[i] != ',' {
			return 0, false
		}
		i = skipSpace(b.src, i+1)
	}
	if comma {
		b.out = append(b.out, ',')
	}
	if contentItems {
		b.out = append(b.out, `{"type":"content","content":{"type":"text","text":"[gateway: truncated `...)
		b.out = strconv.AppendInt(b.out, int64(n), 10)
		b.out = append(b.out, ` more items]"}}`...)
	} else {
		b.out = append(b.out, `"[gateway: truncated `...)
		b.out = strconv.AppendInt(b.out, int64(n), 10)
		b.out = append(b.out, ` more items]"`...)
	}
	b.out = append(b.out, ']')
	b.cut = true
	return i + 1, true
}

// appendString writes one string value (body = raw bytes between the quotes), cut to the remaining budget.
func (b *bounder) appendString(body []byte) {
	room := b.max - len(b.out) - 2
	if len(body) <= room || len(body) <= shortStringBytes {
		b.out = append(b.out, '"')
		b.out = append(b.out, body...)
		b.out = append(b.out, '"')
		return
	}
	k := SafeCut(body, max(room, 0))
	b.out = append(b.out, '"')
	b.out = append(b.out, body[:k]...)
	b.out = AppendCutMarker(b.out, len(body)-k)
	b.out = append(b.out, '"')
	b.cut = true
}

// cutMarkerPrefix starts every in-string truncation marker.
const cutMarkerPrefix = "…[gateway: truncated"

func AppendCutMarker(dst []byte, omitted int) []byte {
	dst = append(dst, cutMarkerPrefix+" "...)
	dst = strconv.AppendInt(dst, int64(omitted), 10)
	return append(dst, " bytes]"...)
}

// SafeCut returns the largest k <= keep at which the raw string body can be cut without splitting an escape
// sequence (a surrogate pair counts as one) or a UTF-8 sequence, backed off to the start of a token-like run
// that continues past the cut (see secretRunBackoff).
func SafeCut(body []byte, keep int) int {
	i, runStart := 0, 0
	for i < len(body) {
		c := body[i]
		n, run := 1, false
		switch {
		case c == '\\':
			n = EscapeLen(body, i)
		case c >= 0x80:
			n = UTF8Len(c)
		default:
			run = isRunByte(c)
		}
		if i+n > keep {
			break
		}
		i += n
		if !run {
			runStart = i
		}
	}
	if i < len(body) && isRunByte(body[i]) && i > runStart && i-runStart <= secretRunBackoff {
		i = runStart
	}
	return i
}

// EscapeLen is the length of the escape sequence at body[i] == '\\'.
func EscapeLen(body []byte, i int) int {
	if i+1 >= len(body) || body[i+1] != 'u' {
		return 2
	}
	if i+6 <= len(body) && body[i+2]|0x20 == 'd' && isHighSurrogateNibble(body[i+3]) &&
		i+12 <= len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
		return 12
	}
	return 6
}

func isHighSurrogateNibble(c byte) bool {
	switch c | 0x20 {
	case '8', '9', 'a', 'b':
		return true
	}
	return false
}

func UTF8Len(c byte) int {
	switch {
	case c >= 0xF0:
		return 4
	case c >= 0xE0:
		return 3
	case c >= 0xC0:
		return 2
	default:
		return 1
	}
}

// isRunByte reports bytes that make up tokens, keys and encodings: what a secret is made of.
func isRunByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.'
}
