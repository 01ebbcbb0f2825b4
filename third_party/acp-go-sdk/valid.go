package acp

import (
	"encoding/binary"
	"math/bits"
)

// acp-gateway patch: validating a line in one tight pass.
//
// json.Valid runs encoding/json's scanner, a state function called through a pointer for every byte: for the
// 600-byte lines of a chatty agent that is a tenth of the gateway's CPU per update. validJSON accepts exactly
// what json.Valid accepts (FuzzValidJSON compares them), looking at most bytes of a string in one loop.

// maxNestingDepth is encoding/json's: json.Valid rejects deeper nesting.
const maxNestingDepth = 10000

// validJSON reports whether b is one JSON value with optional whitespace around it, as json.Valid does
// (strings are not checked for valid UTF-8, as json.Valid does not).
func validJSON(b []byte) bool {
	i, ok := validValue(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

// validValue checks the value at b[i] and returns the index after it.
func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '{' || c == '[':
		if depth >= maxNestingDepth {
			return i, false
		}
		return validContainer(b, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return validNumber(b, i)
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	}
	return i, false
}

// validContainer checks the object or array opening at b[i].
func validContainer(b []byte, i, depth int) (int, bool) {
	object := b[i] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = validString(b, i); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = skipSpace(b, i+1)
		}
		if i, ok = validValue(b, i, depth); !ok {
			return i, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closer:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// Eight bytes at a time: swarSpecial(x) has the high bit of every byte of x that is a control byte, '"' or
// '\\' set; bits above the first such byte may be set too (borrows), never below it, so its lowest set bit
// marks the first one.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

func swarSpecial(x uint64) uint64 {
	q := x ^ (swarOnes * '"')
	e := x ^ (swarOnes * '\\')
	return ((x - swarOnes*0x20) &^ x & swarHighs) | ((q - swarOnes) &^ q & swarHighs) | ((e - swarOnes) &^ e & swarHighs)
}

// nextSpecial returns the index of the first control byte, '"' or '\\' in b[i:], or len(b).
func nextSpecial(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := swarSpecial(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
		i++
	}
	return i
}

// validString checks the string opening at b[i] == '"': no control bytes, only JSON's escapes.
func validString(b []byte, i int) (int, bool) {
	i++
	for {
		if i = nextSpecial(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return i, false
				}
				i += 5
			default:
				return i, false
			}
		default: // a control byte
			return i, false
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// validNumber checks the number at b[i]: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}
