package rawjson

// Valid reports what json.Valid reports, with a loop per byte instead of encoding/json's scanner and its
// call per byte: a follower checks every frame it is fed before it folds it (Restore).
func Valid(b []byte) bool {
	i, ok := validValue(b, skipWS(b, 0), 0)
	return ok && skipWS(b, i) == len(b)
}

// maxJSONDepth is encoding/json's bound on nesting: deeper input is invalid there too.
const maxJSONDepth = 10000

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// validValue checks the value at b[i:] and returns where it ends.
func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		return validContainer(b, i, depth, '}', true)
	case c == '[':
		return validContainer(b, i, depth, ']', false)
	case c == '"':
		return validString(b, i)
	case c == '-' || c >= '0' && c <= '9':
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

// validContainer checks an object (members: a string key, ':', a value) or an array at b[i].
func validContainer(b []byte, i, depth int, end byte, members bool) (int, bool) {
	if depth++; depth > maxJSONDepth {
		return i, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == end {
		return i + 1, true
	}
	for {
		var ok bool
		if members {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = validString(b, i); !ok {
				return i, false
			}
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
		if i, ok = validValue(b, i, depth); !ok {
			return i, false
		}
		switch i = skipWS(b, i); {
		case i >= len(b):
			return i, false
		case b[i] == end:
			return i + 1, true
		case b[i] != ',':
			return i, false
		}
		i = skipWS(b, i+1)
	}
}

// validString checks the string at b[i] (a quote): no control characters, only JSON's escapes.
func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i++; i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
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
		if i++; i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		i = digits(b, i)
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
