package translate

import (
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// toolCall is the merged state of one tool call: what a client that saw every update knows. Fields are kept
// as raw JSON members in order of first appearance, already bounded and redacted.
//
// Merge rule (ACP's): `content` and `locations` replace the collection; every other field overwrites when
// present. A null value means "not provided" (that is how the SDK and the protocol's Option fields read it),
// so it changes nothing. `_meta` is an extension bag and merges one level deep: keys of a later `_meta`
// replace the same keys, others stay (so the gateway's closer can add `gateway.reason` without erasing the
// agent's `claudeCode` metadata).
type toolCall struct {
	id     string
	turn   *turnRec
	fields []toolField // toolCallId first
	entry  *entry      // its snapshot entry; nil once evicted
	// term is the output accumulated for `_meta.terminal_output`, which the stored `_meta` holds as "" (terminalmeta.go);
	// nil when the `_meta` has none.
	term *terminalTail
}

type toolField struct {
	key string
	val []byte
}

func (tc *toolCall) get(key string) []byte {
	for _, f := range tc.fields {
		if f.key == key {
			return f.val
		}
	}
	return nil
}

// terminal reports whether the call reached completed or failed. Anything else (no status, pending,
// in_progress, an unknown status) is open.
func (tc *toolCall) terminal() bool {
	s := string(tc.get("status"))
	return s == `"completed"` || s == `"failed"`
}

// set stores one member (value copied: the caller's bytes belong to the agent's frame).
func (tc *toolCall) set(key string, val []byte) {
	if rawjson.IsNull(val) {
		return
	}
	if key == "_meta" {
		val = mergeMeta(tc.get("_meta"), val)
		if tc.term != nil && rawjson.Lookup(val, "terminal_output") == nil {
			tc.term = nil // the merge dropped it (a `_meta` that is not an object replaces the whole)
		}
	} else {
		val = append([]byte(nil), val...)
	}
	for i := range tc.fields {
		if tc.fields[i].key == key {
			tc.fields[i].val = val
			return
		}
	}
	tc.fields = append(tc.fields, toolField{key: key, val: val})
}

func (tc *toolCall) size() int {
	n := 64
	for _, f := range tc.fields {
		n += len(f.key) + len(f.val) + 4
	}
	if tc.term != nil {
		n += tc.term.bodyLen()
	}
	return n
}

// appendObject writes the merged tool call as an ACP ToolCall object (no sessionUpdate), optionally with
// extra members first (replay adds `"sessionUpdate":"tool_call"`).
func (tc *toolCall) appendObject(dst []byte, prefix string) []byte {
	dst = append(dst, '{')
	dst = append(dst, prefix...)
	for i, f := range tc.fields {
		if i > 0 || prefix != "" {
			dst = append(dst, ',')
		}
		dst = appendString(dst, f.key)
		dst = append(dst, ':')
		if f.key == "_meta" {
			dst = append(dst, tc.renderMeta(f.val)...)
		} else {
			dst = append(dst, f.val...)
		}
	}
	return append(dst, '}')
}

// mergeMeta merges b's members over a's (both raw objects). When either is not an object, b wins whole.
func mergeMeta(a, b []byte) []byte {
	if len(a) == 0 || a[0] != '{' || len(b) == 0 || b[0] != '{' {
		return append([]byte(nil), b...)
	}
	out := make([]byte, 0, len(a)+len(b))
	out = append(out, '{')
	first := true
	err := rawjson.EachMember(a, func(m rawjson.Member) bool {
		if rawjson.Lookup(b, string(m.Key(a))) != nil {
			return true
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, a[m.KeyStart:m.ValEnd]...)
		return true
	})
	if err != nil {
		return append([]byte(nil), b...)
	}
	err = rawjson.EachMember(b, func(m rawjson.Member) bool {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, b[m.KeyStart:m.ValEnd]...)
		return true
	})
	if err != nil {
		return append([]byte(nil), b...)
	}
	return append(out, '}')
}

// passFields are tool-call members neither bounded nor redacted: ids and enums the gateway must match on.
func passField(key []byte) bool {
	switch string(key) {
	case "sessionUpdate", "toolCallId", "status", "kind":
		return true
	}
	return false
}

func boundShape(key []byte) (rawjson.Shape, bool) {
	switch string(key) {
	case "content":
		return rawjson.ShapeContent, true
	case "rawInput", "rawOutput":
		return rawjson.ShapeAny, true
	case "_meta":
		return rawjson.ShapeObject, true
	}
	return 0, false
}

// cleanField bounds then redacts one tool-call member value. It returns v itself when nothing changed, and
// when restoring (a logged value was cleaned before it was logged).
func (c *Context) cleanField(key, v []byte) (out []byte, cut, changed bool) {
	out = v
	if passField(key) || c.restoring {
		return out, false, false
	}
	if shape, ok := boundShape(key); ok {
		out, cut = rawjson.Bound(out, c.cfg.MaxFieldBytes, shape)
		changed = cut || len(out) != len(v)
	}
	if c.cfg.Redact {
		var red bool
		out, red = rawjson.Redact(out)
		changed = changed || red
	}
	return out, cut, changed
}

// toolUpdate handles `tool_call` and `tool_call_update`: bound and redact the fields, fold them into the
// tool call's merged state, and return the update object to forward (upd itself when nothing changed).
func (c *Context) toolUpdate(upd []byte, create bool) ([]byte, bool, error) {
	var out []byte
	truncated, changed := false, false
	var idRaw []byte
	type kv struct{ key, val []byte }
	var fieldsBuf [12]kv
	fields := fieldsBuf[:0]
	err := rawjson.EachMember(upd, func(m rawjson.Member) bool {
		k, v := m.Key(upd), m.Value(upd)
		if string(k) == "toolCallId" {
			idRaw = v
		}
		nv, cut, ch := c.cleanField(k, v)
		truncated = truncated || cut
		if ch && !changed {
			changed = true
		}
		fields = append(fields, kv{k, nv})
		return true
	})
	if err != nil {
		return nil, false, err
	}
	if changed {
		out = make([]byte, 0, len(upd))
		out = append(out, '{')
		for i, f := range fields {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, '"')
			out = append(out, f.key...)
			out = append(out, `":`...)
			out = append(out, f.val...)
		}
		out = append(out, '}')
	} else {
		out = upd
	}
	id, ok := rawjson.DecodeString(idRaw)
	if !ok {
		return out, truncated, nil // not a tool call we can track; forwarded as is
	}
	tc := c.toolFor(id, idRaw, create)
	before := tc.size()
	for _, f := range fields {
		if string(f.key) == "sessionUpdate" || string(f.key) == "toolCallId" {
			continue
		}
		val := f.val
		if shape, ok := boundShape(f.key); ok {
			val, _ = rawjson.Bound(val, c.lim.messageBytes, shape)
		} else if len(val) > c.lim.messageBytes && c.lim.messageBytes > 0 {
			val, _ = rawjson.Bound(val, c.lim.messageBytes, rawjson.ShapeAny)
		}
		if string(f.key) == "_meta" {
			val = tc.foldTerminalOutput(val, c.lim.messageBytes) // terminalmeta.go
		}
		tc.set(string(f.key), val)
	}
	c.resized(tc.entry, tc.size()-before)
	return out, truncated, nil
}

// toolFor returns the state a tool call update merges into. A `tool_call` starts a new call unless the id is
// already known in the running turn (agents such as claude-agent-acp announce a call, then announce it again
// with its input); ids are only unique per turn (the SDK example agent reuses call_1 every turn). An update
// for an unknown id creates the call, since a permission request or update can overtake its `tool_call`.
func (c *Context) toolFor(id string, idRaw []byte, create bool) *toolCall {
	tc := c.tools[id]
	if tc != nil && (!create || tc.turn == c.turn && c.turn != nil) {
		if tc.entry == nil { // evicted in the running turn: a new entry continues it
			c.stream = stream{}
			c.addToolEntry(tc, true)
		}
		return tc
	}
	tc = &toolCall{id: id, turn: c.turn}
	tc.fields = append(tc.fields, toolField{key: "toolCallId", val: append([]byte(nil), idRaw...)})
	c.tools[id] = tc
	if c.turn != nil {
		c.turnTools = append(c.turnTools, tc)
	}
	c.stream = stream{} // a tool call interrupts the message being streamed
	c.addToolEntry(tc, false)
	return tc
}

// closer builds the gateway's terminal update for an open tool call and folds it.
func (c *Context) closer(tc *toolCall, reason string) []byte {
	meta := append([]byte(`{"gateway":{"reason":`), appendString(nil, reason)...)
	meta = append(meta, "}}"...)
	var upd []byte
	upd = append(upd, `{"sessionUpdate":"tool_call_update","toolCallId":`...)
	upd = append(upd, tc.get("toolCallId")...)
	upd = append(upd, `,"status":"failed","_meta":`...)
	upd = append(upd, meta...)
	upd = append(upd, '}')
	before := tc.size()
	tc.set("status", []byte(`"failed"`))
	tc.set("_meta", meta)
	c.resized(tc.entry, tc.size()-before)
	return c.wrapParams(upd)
}

// wrapParams returns `{"sessionId":<gateway id>,"update":upd}`.
func (c *Context) wrapParams(upd []byte) []byte {
	p := make([]byte, 0, len(upd)+len(c.cfg.SessionID)+32)
	p = append(p, `{"sessionId":`...)
	p = appendString(p, c.cfg.SessionID)
	p = append(p, `,"update":`...)
	p = append(p, upd...)
	return append(p, '}')
}

// PermissionToolCall returns the toolCall of an agent's permission request merged over the known state of
// that tool call, bounded and redacted like an update, so the client sees the title, kind, locations and
// diff the agent announced earlier even when the request carries only the id. An unknown or malformed
// toolCall is returned cleaned but otherwise as the agent sent it. It does not change the state.
func (c *Context) PermissionToolCall(raw json.RawMessage) json.RawMessage {
	raw = rawjson.ValidUTF8(raw)
	cleaned := &toolCall{}
	var idRaw []byte
	err := rawjson.EachMember(raw, func(m rawjson.Member) bool {
		k, v := m.Key(raw), m.Value(raw)
		if string(k) == "toolCallId" {
			idRaw = v
		}
		nv, _, _ := c.cleanField(k, v)
		cleaned.set(string(k), nv)
		return true
	})
	if err != nil {
		return raw
	}
	id, ok := rawjson.DecodeString(idRaw)
	known := c.tools[id]
	if !ok || known == nil {
		return cleaned.appendObject(nil, "")
	}
	merged := &toolCall{fields: append([]toolField(nil), known.fields...)}
	for i, f := range merged.fields {
		if f.key == "_meta" {
			merged.fields[i].val = known.renderMeta(f.val)
		}
	}
	for _, f := range cleaned.fields {
		if f.key == "toolCallId" {
			continue
		}
		merged.set(f.key, f.val)
	}
	return merged.appendObject(nil, "")
}

// PermissionParams returns an agent's `session/request_permission` params for clients: the session id
// rewritten and the toolCall replaced by PermissionToolCall's merge. Everything else is kept byte for byte.
func (c *Context) PermissionParams(params []byte) ([]byte, error) {
	params = rawjson.ValidUTF8(params)
	out := make([]byte, 0, len(params)+256)
	out = append(out, '{')
	first, sawSession := true, false
	err := rawjson.EachMember(params, func(m rawjson.Member) bool {
		if !first {
			out = append(out, ',')
		}
		first = false
		switch string(m.Key(params)) {
		case "sessionId":
			sawSession = true
			out = append(out, `"sessionId":`...)
			out = appendString(out, c.cfg.SessionID)
		case "toolCall":
			out = append(out, `"toolCall":`...)
			out = append(out, c.PermissionToolCall(m.Value(params))...)
		default:
			out = append(out, params[m.KeyStart:m.ValEnd]...)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if !sawSession {
		if !first {
			out = append(out, ',')
		}
		out = append(out, `"sessionId":`...)
		out = appendString(out, c.cfg.SessionID)
	}
	return append(out, '}'), nil
}
