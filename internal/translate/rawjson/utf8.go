package rawjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// replacementChar is what an invalid UTF-8 sequence becomes.
const replacementChar = "\uFFFD"

// ValidUTF8 returns b with every run of invalid UTF-8 replaced by U+FFFD. Valid input (the normal case) is
// returned as is, without allocating. Browsers must fail a WebSocket whose text frame is not UTF-8 (RFC 6455
// §8.1), so one bad byte an agent or client sent would break every replay of the log for good. Raw JSON is
// where this matters: encoding/json replaces invalid bytes when it encodes Go strings, but copies a
// json.RawMessage verbatim. Replacing inside a JSON string keeps it a JSON string; outside strings invalid
// bytes are not JSON in the first place, so valid JSON stays valid JSON.
func ValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte(replacementChar))
}

// EchoID returns a client's JSON-RPC id re-encoded for a reply that echoes it: a string is decoded and
// encoded again (invalid UTF-8 and odd escapes come back clean), a number keeps its digits, and anything
// else (null, an object, an array, a bool, malformed bytes) becomes null. A client's raw bytes are never
// echoed.
func EchoID(id json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(id)
	if len(t) == 0 {
		return json.RawMessage("null")
	}
	switch c := t[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(t, &s) != nil {
			return json.RawMessage("null")
		}
		b, _ := json.Marshal(s)
		return b
	case c == '-' || c >= '0' && c <= '9':
		var n json.Number
		if json.Unmarshal(t, &n) != nil {
			return json.RawMessage("null")
		}
		return json.RawMessage(n)
	default:
		return json.RawMessage("null")
	}
}
