package acpws

import "bytes"

// forwardsAsIs reports whether a log frame is a `session/update` that every socket forwards as it is: one
// whose update is not a user_message_chunk (only those depend on the socket, which does not get its own
// turn's echoed). Nearly every frame of a turn is one.
//
// It answers in one pass over the frame's structure, skipping strings with IndexByte and decoding nothing:
// decoding every frame with encoding/json, once per socket, was three quarters of the gateway's CPU with
// ten `/acp` clients on one session. It says true only when json.Unmarshal into logFrame would read the
// frame the same way and without error, and false whenever it cannot be sure: keys with escapes or
// non-ASCII bytes (encoding/json unescapes keys and matches them case-insensitively, by Unicode folding),
// an escaped method or sessionUpdate, a member logFrame reads that has the wrong type, anything malformed.
// forward then decodes the frame as before, so every frame is forwarded or not exactly as before. The log
// holds only frames the gateway encoded, so they are valid JSON: scalars are skipped, not checked.
func forwardsAsIs(b []byte) bool {
	var method, kind []byte
	i := enter(b, 0)
	for i >= 0 {
		key, end := []byte(nil), false
		if key, i, end = member(b, i); i < 0 {
			return false
		}
		switch {
		case end:
			return space(b, i) == len(b) && string(method) == "session/update" && string(kind) != "user_message_chunk"
		case foldEq(key, "method"):
			i = plainStringOrNull(b, i, &method)
		case foldEq(key, "params"):
			i = params(b, i, &kind)
		default: // id (any JSON value) and members logFrame does not read
			i = value(b, i)
		}
	}
	return false
}

// The readers below take the index of a value (or of what follows `{`) in b and return the index after it,
// or -1 when b is not what logFrame reads without error there.

// params reads the params object (or null) as logFrame does, setting kind to each update's sessionUpdate.
func params(b []byte, i int, kind *[]byte) int {
	if i, ok := null(b, i); ok {
		return i
	}
	for i = enter(b, i); i >= 0; {
		key, end := []byte(nil), false
		if key, i, end = member(b, i); i < 0 || end {
			return i
		}
		switch {
		case foldEq(key, "update"):
			i = update(b, i, kind)
		case foldEq(key, "permissionid"), foldEq(key, "requestid"), foldEq(key, "mode"):
			i = stringOrNull(b, i)
		case foldEq(key, "_meta"):
			i = objectOrNull(b, i, "gateway", gateway)
		default:
			i = value(b, i)
		}
	}
	return i
}

// update reads params.update (or null), setting kind to its sessionUpdate.
func update(b []byte, i int, kind *[]byte) int {
	if i, ok := null(b, i); ok {
		return i
	}
	for i = enter(b, i); i >= 0; {
		key, end := []byte(nil), false
		if key, i, end = member(b, i); i < 0 || end {
			return i
		}
		if foldEq(key, "sessionupdate") {
			i = plainStringOrNull(b, i, kind)
		} else {
			i = value(b, i)
		}
	}
	return i
}

// gateway reads params._meta.gateway (or null): its turnId is a string (or null).
func gateway(b []byte, i int) int { return objectOrNull(b, i, "turnid", stringOrNull) }

// objectOrNull reads an object (or null) whose member name (lower case) is read by read, the others skipped.
func objectOrNull(b []byte, i int, name string, read func(b []byte, i int) int) int {
	if i, ok := null(b, i); ok {
		return i
	}
	for i = enter(b, i); i >= 0; {
		key, end := []byte(nil), false
		if key, i, end = member(b, i); i < 0 || end {
			return i
		}
		if foldEq(key, name) {
			i = read(b, i)
		} else {
			i = value(b, i)
		}
	}
	return i
}

func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// enter reads the `{` of an object.
func enter(b []byte, i int) int {
	if i = space(b, i); i < len(b) && b[i] == '{' {
		return i + 1
	}
	return -1
}

// member reads an entered object up to its next member's value: the separator, the key (the bytes between
// its quotes, which must be plain: no escapes, ASCII only) and the colon. end is set when the object closed
// instead. The caller reads the value before asking for the next member.
func member(b []byte, i int) (key []byte, next int, end bool) {
	i = space(b, i)
	if i < len(b) && b[i] == '}' {
		return nil, i + 1, true
	}
	if i < len(b) && b[i] == ',' {
		i = space(b, i+1)
	}
	start := i
	if i = str(b, i); i < 0 {
		return nil, -1, false
	}
	key = b[start+1 : i-1]
	if i = space(b, i); !plain(key) || i >= len(b) || b[i] != ':' {
		return nil, -1, false
	}
	return key, space(b, i+1), false
}

// plainStringOrNull reads a string without escapes or non-ASCII bytes into *v (what is between its quotes),
// or null, which leaves *v alone. Anything else is -1.
func plainStringOrNull(b []byte, i int, v *[]byte) int {
	if i, ok := null(b, i); ok {
		return i
	}
	start := i
	if i = str(b, i); i < 0 || !plain(b[start+1:i-1]) {
		return -1
	}
	*v = b[start+1 : i-1]
	return i
}

// stringOrNull reads any string, or null: what a string field takes without error.
func stringOrNull(b []byte, i int) int {
	if i, ok := null(b, i); ok {
		return i
	}
	return str(b, i)
}

func null(b []byte, i int) (int, bool) {
	if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
		return i + 4, true
	}
	return i, false
}

// str skips the string at i: a quote ends it unless an odd run of backslashes precedes it.
func str(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		esc := 0
		for m := j - 1; m > i && b[m] == '\\'; m-- {
			esc++
		}
		if esc%2 == 0 {
			return j + 1
		}
	}
}

// value skips the value at i.
func value(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return str(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = str(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i // a number, true, false or null
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

// plain reports whether b has no escapes and no non-ASCII bytes, so that its bytes are what it decodes to
// and only ASCII case folding can make it match a name.
func plain(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// foldEq reports whether the plain key equals lower (a lower-case ASCII name) ignoring ASCII case, as
// encoding/json matches a plain key to a field.
func foldEq(key []byte, lower string) bool {
	if len(key) != len(lower) {
		return false
	}
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
