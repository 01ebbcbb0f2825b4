package translate

import (
	"encoding/json"
	"unicode/utf8"
)

// Terminals the gateway serves stream as `_gateway/terminal_output {terminalId, data, truncated?}` and
// `_gateway/terminal_exit {terminalId, exitCode, signal}` notes, not as session/update, so the snapshot folds
// them apart from the entries: a client that resyncs or reloads fills a terminal's pane from
//
//	"terminals":[{"terminalId","output","truncated"?:true,"exitStatus"?:{"exitCode","signal"}}]
//
// in order of first output. output is the last snapTerminalBytes of the text, cut at a character boundary
// (truncated says something before it is missing: cut here, or not logged past the gateway's budget). At
// most snapTerminals terminals are kept; the oldest go first.

const (
	snapTerminalBytes = 64 << 10
	snapTerminals     = 32
)

// terminalSnap is one terminal's folded state. Its fields are replaced, never changed in place, so a frozen
// view shares them.
type terminalSnap struct {
	id        string
	output    string
	truncated bool
	exitCode  json.RawMessage // nil until the exit
	signal    json.RawMessage
	exited    bool
}

// foldTerminal folds a `_gateway/terminal_output` or `_gateway/terminal_exit` note; malformed ones are ignored.
func (c *Context) foldTerminal(method string, params []byte) {
	var p struct {
		TerminalID string          `json:"terminalId"`
		Data       string          `json:"data"`
		Truncated  bool            `json:"truncated"`
		ExitCode   json.RawMessage `json:"exitCode"`
		Signal     json.RawMessage `json:"signal"`
	}
	if json.Unmarshal(params, &p) != nil || p.TerminalID == "" {
		return
	}
	t := c.terminal(p.TerminalID)
	if method == "_gateway/terminal_exit" {
		t.exited, t.exitCode, t.signal = true, jsonOrNull(p.ExitCode), jsonOrNull(p.Signal)
		return
	}
	t.truncated = t.truncated || p.Truncated
	out := t.output + p.Data
	if len(out) > snapTerminalBytes {
		cut := len(out) - snapTerminalBytes
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out, t.truncated = out[cut:], true
		out = string([]byte(out)) // let the dropped start go
	}
	t.output = out
}

// terminal finds or adds the state of a terminal, evicting the oldest past snapTerminals.
func (c *Context) terminal(id string) *terminalSnap {
	s := &c.snap
	for _, t := range s.terminals {
		if t.id == id {
			return t
		}
	}
	if len(s.terminals) >= snapTerminals {
		s.terminals = append(s.terminals[:0:0], s.terminals[1:]...)
	}
	t := &terminalSnap{id: id}
	s.terminals = append(s.terminals, t)
	return t
}

func jsonOrNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return append(json.RawMessage(nil), v...)
}

// freezeTerminals copies the terminals' states for a SnapshotView.
func freezeTerminals(ts []*terminalSnap) []terminalSnap {
	if len(ts) == 0 {
		return nil
	}
	out := make([]terminalSnap, len(ts))
	for i, t := range ts {
		out[i] = *t
	}
	return out
}

// appendTerminals appends the snapshot's "terminals" member (nothing when there are none).
func appendTerminals(out []byte, ts []terminalSnap) []byte {
	if len(ts) == 0 {
		return out
	}
	out = append(out, `,"terminals":[`...)
	for i, t := range ts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"terminalId":`...)
		out = appendString(out, t.id)
		out = append(out, `,"output":`...)
		out = appendString(out, t.output)
		if t.truncated {
			out = append(out, `,"truncated":true`...)
		}
		if t.exited {
			out = append(out, `,"exitStatus":{"exitCode":`...)
			out = append(out, t.exitCode...)
			out = append(out, `,"signal":`...)
			out = append(out, t.signal...)
			out = append(out, '}')
		}
		out = append(out, '}')
	}
	return append(out, ']')
}
