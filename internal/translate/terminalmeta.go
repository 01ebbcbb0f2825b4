package translate

import "bytes"

// Terminal output in tool calls. An agent told that the client renders terminals (the gateway advertises
// `clientCapabilities._meta.terminal_output`) sends a command's output in the update-level `_meta` of its tool
// call: `terminal_info {terminal_id}`, then `terminal_output {terminal_id, data}` with NEW output in each update
// (codex-acp streams many; claude-agent-acp sends one), then `terminal_exit {terminal_id, exit_code, signal}`.
// Updates are forwarded as sent (bounded and redacted like any `_meta`); clients append each data. The merged
// state must hold all of it, not only the last chunk that `_meta`'s one-level merge would keep, so a client
// rendering a snapshot sees the same output as one that saw every update.

// withAccumulatedTerminalOutput returns upd (an update's `_meta`) with `terminal_output.data` prefixed by the
// data prev (the merged `_meta`) holds for the same terminal id, keeping the last maxBytes (0 = unbounded).
// upd itself is returned when there is nothing to accumulate.
func withAccumulatedTerminalOutput(prev, upd []byte, maxBytes int) []byte {
	newOut := lookup(upd, "terminal_output")
	oldOut := lookup(prev, "terminal_output")
	if newOut == nil || oldOut == nil || !bytes.Equal(lookup(oldOut, "terminal_id"), lookup(newOut, "terminal_id")) {
		return upd
	}
	oldData, ok1 := stringBody(lookup(oldOut, "data"))
	newData, ok2 := stringBody(lookup(newOut, "data"))
	if !ok1 || !ok2 {
		return upd
	}
	// Raw bodies concatenate into a valid body: an escape never spans the boundary of a JSON string.
	data := make([]byte, 0, len(oldData)+len(newData)+2)
	data = append(data, '"')
	data = appendTail(data, append(append([]byte(nil), oldData...), newData...), maxBytes)
	data = append(data, '"')
	out, ok := replaceMember(newOut, "data", data)
	if !ok {
		return upd
	}
	if res, ok := replaceMember(upd, "terminal_output", out); ok {
		return res
	}
	return upd
}

// appendTail appends the raw string body, or when it is longer than max its end behind a cut marker, cut
// where no escape sequence or UTF-8 sequence is split.
func appendTail(dst, body []byte, max int) []byte {
	if max <= 0 || len(body) <= max {
		return append(dst, body...)
	}
	from := len(body) - max
	i := 0
	for i < from {
		switch c := body[i]; {
		case c == '\\':
			i += escapeLen(body, i)
		case c >= 0x80:
			i += utf8Len(c)
			for i < len(body) && body[i]&0xC0 == 0x80 { // continuation bytes of a malformed sequence
				i++
			}
		default:
			i++
		}
	}
	dst = appendCutMarker(dst, i)
	return append(dst, body[min(i, len(body)):]...)
}

// replaceMember returns the object obj with the value of its top-level member key replaced by val.
func replaceMember(obj []byte, key string, val []byte) ([]byte, bool) {
	out := make([]byte, 0, len(obj)+len(val))
	found := false
	err := eachMember(obj, func(m member) bool {
		if len(out) == 0 {
			out = append(out, '{')
		} else {
			out = append(out, ',')
		}
		out = append(out, obj[m.keyStart:m.keyEnd]...)
		out = append(out, ':')
		if string(m.key(obj)) == key {
			found = true
			out = append(out, val...)
		} else {
			out = append(out, m.value(obj)...)
		}
		return true
	})
	if err != nil || !found {
		return nil, false
	}
	return append(out, '}'), true
}
