package translate

import (
	"bytes"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// Terminal output in tool calls. An agent told that the client renders terminals (the gateway advertises
// `clientCapabilities._meta.terminal_output`) sends a command's output in the update-level `_meta` of its tool
// call: `terminal_info {terminal_id}`, then `terminal_output {terminal_id, data}` with NEW output in each update
// (codex-acp streams many; claude-agent-acp sends one), then `terminal_exit {terminal_id, exit_code, signal}`.
// Updates are forwarded as sent (bounded and redacted like any `_meta`); clients append each data. The merged
// state must hold all of it, not only the last chunk that `_meta`'s one-level merge would keep, so a client
// rendering a snapshot sees the same output as one that saw every update.
//
// A command can stream thousands of chunks, so the accumulated output is not kept inside the merged `_meta`
// (merging would copy and rescan all of it per chunk): the stored `_meta` holds the last terminal_output
// member with `"data":""`, the output itself is a terminalTail beside it, and the two are put together only
// when the merged tool call is written (snapshot, replay, permission requests).

// terminalTail is the output accumulated for one terminal id: the raw JSON string bodies of its chunks,
// concatenated (raw bodies concatenate into a valid body: an escape never spans the boundary of a JSON
// string), of which the last max bytes are kept (0 = all), cut where no escape or UTF-8 sequence is split.
// Bytes written below len(buf) never change: a frozen view keeps a window of them, and compaction moves the
// kept bytes to a new array.
type terminalTail struct {
	id      []byte // the raw terminal_id value; nil when the chunk had none
	buf     []byte // the kept output is buf[start:]
	start   int    // always at a token boundary (escape, UTF-8 sequence or byte) of the concatenation
	omitted int    // bytes dropped from the front
	max     int
}

func newTerminalTail(id, body []byte, max int) *terminalTail {
	return &terminalTail{id: append([]byte(nil), id...), buf: append([]byte(nil), body...), max: max}
}

// add appends a chunk's raw body and drops from the front what is past max. Each byte is appended once,
// scanned at most once when it is dropped and moved by compaction a bounded number of times, so a chunk
// costs its own length whatever has accumulated.
func (t *terminalTail) add(body []byte) {
	if t.start > 0 && len(t.buf)+len(body) > cap(t.buf) {
		kept := t.buf[t.start:]
		nb := make([]byte, len(kept), len(kept)+len(body)+max(t.max/2, len(body)))
		copy(nb, kept)
		t.buf, t.start = nb, 0
	}
	t.buf = append(t.buf, body...)
	if t.max <= 0 || len(t.buf)-t.start <= t.max {
		return
	}
	from, i := len(t.buf)-t.max, t.start
	for i < from {
		switch c := t.buf[i]; {
		case c == '\\':
			i += rawjson.EscapeLen(t.buf, i)
		case c >= 0x80:
			i += rawjson.UTF8Len(c)
			for i < len(t.buf) && t.buf[i]&0xC0 == 0x80 { // continuation bytes of a malformed sequence
				i++
			}
		default:
			i++
		}
	}
	i = min(i, len(t.buf))
	t.omitted += i - t.start
	t.start = i
}

// bodyLen is the length of the raw body appendBody writes.
func (t *terminalTail) bodyLen() int {
	n := len(t.buf) - t.start
	if t.omitted > 0 {
		n += len(rawjson.AppendCutMarker(nil, t.omitted))
	}
	return n
}

// appendData appends the accumulated output as a JSON string: the kept output, behind a marker that counts
// the bytes left out when any were.
func (t *terminalTail) appendData(dst []byte) []byte {
	dst = append(dst, '"')
	if t.omitted > 0 {
		dst = rawjson.AppendCutMarker(dst, t.omitted)
	}
	dst = append(dst, t.buf[t.start:]...)
	return append(dst, '"')
}

// frozen returns a copy that later adds do not change (for a SnapshotView).
func (t *terminalTail) frozen() *terminalTail {
	if t == nil {
		return nil
	}
	cp := *t
	cp.buf = cp.buf[:len(cp.buf):len(cp.buf)]
	return &cp
}

// foldTerminalOutput takes an update's (bounded) `_meta` before it is merged into the call's: a
// terminal_output with string data goes into the call's terminalTail — appended when the terminal id is the
// one accumulating, else started over — and the `_meta` returned holds it with `"data":""`. A terminal_output
// without string data replaces the accumulated one, as the merge does.
func (tc *toolCall) foldTerminalOutput(upd []byte, maxBytes int) []byte {
	out := rawjson.Lookup(upd, "terminal_output")
	if out == nil {
		return upd // the accumulated output stays, unless the merge drops it (set)
	}
	data, ok := rawjson.StringBody(rawjson.Lookup(out, "data"))
	var res []byte
	if ok {
		var stub []byte
		if stub, ok = replaceMember(out, "data", []byte(`""`)); ok {
			res, ok = replaceMember(upd, "terminal_output", stub)
		}
	}
	if !ok {
		tc.term = nil
		return upd
	}
	id := rawjson.Lookup(out, "terminal_id")
	if tc.term != nil && bytes.Equal(tc.term.id, id) {
		tc.term.add(data)
	} else {
		tc.term = newTerminalTail(id, data, maxBytes)
	}
	return res
}

// renderMeta returns the stored `_meta` meta with the accumulated output in its terminal_output.data.
func (tc *toolCall) renderMeta(meta []byte) []byte {
	if tc.term == nil {
		return meta
	}
	out, ok := replaceMember(rawjson.Lookup(meta, "terminal_output"), "data", tc.term.appendData(nil))
	if !ok {
		return meta
	}
	if res, ok := replaceMember(meta, "terminal_output", out); ok {
		return res
	}
	return meta
}

// replaceMember returns the object obj with the value of its top-level member key replaced by val.
func replaceMember(obj []byte, key string, val []byte) ([]byte, bool) {
	out := make([]byte, 0, len(obj)+len(val))
	found := false
	err := rawjson.EachMember(obj, func(m rawjson.Member) bool {
		if len(out) == 0 {
			out = append(out, '{')
		} else {
			out = append(out, ',')
		}
		out = append(out, obj[m.KeyStart:m.KeyEnd]...)
		out = append(out, ':')
		if string(m.Key(obj)) == key {
			found = true
			out = append(out, val...)
		} else {
			out = append(out, m.Value(obj)...)
		}
		return true
	})
	if err != nil || !found {
		return nil, false
	}
	return append(out, '}'), true
}
