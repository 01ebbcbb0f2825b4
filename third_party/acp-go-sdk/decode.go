package acp

import (
	"encoding/json"
)

// acp-gateway patch: decoding a line without encoding/json's per-call state.
//
// json.Unmarshal(line, &msg) allocates, besides the copy of params it must make, its decoder state, the
// scanner's stack, an error context for the struct and a string for "2.0" and for the method: about 300 bytes
// per message on top of the params, for every notification a chatty agent sends. decodeMessage gives the same
// anyMessage for the plain envelope every peer writes, with only the copies the message keeps, and leaves
// everything else to json.Unmarshal.

// decodeMessage is json.Unmarshal(line, msg) for a zero msg, except that msg.Params and msg.Result may be
// slices of line (borrowed) until msg.keep copies them.
func decodeMessage(line []byte, msg *anyMessage) error {
	if validJSON(line) && decodeEnvelope(line, msg) {
		msg.borrowed = true
		return nil
	}
	m := new(anyMessage) // not msg itself: it would escape to the heap on every line
	err := json.Unmarshal(line, m)
	*msg = *m
	return err
}

// keep gives msg its own copy of what it borrowed from the line it was decoded from.
func (msg *anyMessage) keep() {
	if msg.borrowed {
		msg.Params = cloneRaw(msg.Params)
		msg.Result = cloneRaw(msg.Result)
		msg.borrowed = false
	}
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// decodeEnvelope fills msg from valid JSON, params and result as slices of line, when it is an object whose
// members json.Unmarshal would match exactly as written (no escapes or other case in the keys the envelope
// knows, string values of ASCII without escapes for jsonrpc and method, no error member, no null id). It
// reports false, leaving msg partly filled, for anything else.
func decodeEnvelope(line []byte, msg *anyMessage) bool {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return true
	}
	for i < len(line) {
		keyEnd := stringEnd(line, i)
		key := line[i+1 : keyEnd-1]
		i = skipSpace(line, keyEnd)
		i = skipSpace(line, i+1) // the colon
		valEnd := valueEnd(line, i)
		val := line[i:valEnd]
		switch string(key) {
		case "jsonrpc":
			s, ok := plainString(val)
			if !ok {
				return false
			}
			if string(s) == "2.0" {
				msg.JSONRPC = "2.0"
			} else {
				msg.JSONRPC = string(s)
			}
		case "method":
			s, ok := plainString(val)
			if !ok {
				return false
			}
			if string(s) == ClientMethodSessionUpdate {
				msg.Method = ClientMethodSessionUpdate
			} else {
				msg.Method = string(s)
			}
		case "id":
			if val[0] == 'n' {
				return false
			}
			id := json.RawMessage(append([]byte(nil), val...))
			msg.ID = &id
		case "params":
			msg.Params = val
		case "result":
			msg.Result = val
		default:
			if foldsToEnvelopeKey(key) {
				return false // "error", an escaped key, or one json.Unmarshal matches case-insensitively
			}
		}
		i = skipSpace(line, valEnd)
		if line[i] == '}' {
			return true
		}
		i = skipSpace(line, i+1) // the comma
	}
	return false
}

// foldsToEnvelopeKey reports whether json.Unmarshal could store a member with this raw key in anyMessage
// other than as decodeEnvelope does: any escape, and any key equal to a field's name but for case.
func foldsToEnvelopeKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 { // escapes; non-ASCII letters that fold to ASCII (U+017F, U+212A)
			return true
		}
	}
	for _, name := range [...]string{"jsonrpc", "id", "method", "params", "result", "error"} {
		if len(key) == len(name) && equalFoldASCII(key, name) {
			return true
		}
	}
	return false
}

func equalFoldASCII(b []byte, s string) bool {
	for i := range b {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// plainString returns the body of a JSON string of ASCII without escapes.
func plainString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	body := v[1 : len(v)-1]
	for _, c := range body {
		if c == '\\' || c >= 0x80 { // escapes; json.Unmarshal would replace invalid UTF-8
			return nil, false
		}
	}
	return body, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at b[i] == '"' (valid JSON: no control bytes, so
// nextSpecial stops only at '"' and '\\').
func stringEnd(b []byte, i int) int {
	for i++; ; i++ {
		if i = nextSpecial(b, i); i >= len(b) {
			return len(b)
		}
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// valueEnd returns the index after the value starting at b[i] (valid JSON).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return len(b)
}
