package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/translate/ask"
	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// RestoreInfo is what Restore learned from one logged frame.
type RestoreInfo struct {
	Method string
	Meta   GatewayMeta     // the frame's `_meta.gateway` stamp
	Params json.RawMessage // the frame's params as logged, stamp included; aliases the frame
	Kind   string          // session/update: update.sessionUpdate
	Text   string          // session/update: the agent message text it adds (what Update.Text is)
	// Permission is set for a `session/request_permission` frame.
	Permission *RestoredPermission
	// Elicitation is set for an `elicitation/create` frame (ID and Deadline as for a permission).
	Elicitation *RestoredElicitation
}

// RestoredElicitation is a logged elicitation request.
type RestoredElicitation struct {
	ID       string
	Request  ask.ElicitationRequest
	Deadline string
}

// RestoredPermission is a logged permission request.
type RestoredPermission struct {
	ID       string                // the gateway permission id (the frame's JSON-RPC id)
	Request  ask.PermissionRequest // the options, and the toolCall as clients saw it
	ToolCall json.RawMessage       // the merged tool call the frame carries (what PermissionToolCall returned)
	Deadline string                // RFC 3339, from the stamp
}

var errNotLogged = errors.New("restore: not a frame the gateway logs")

// Restore folds a frame the session logged (`session/update`, `session/request_permission`, a `_gateway/*`
// note) into the snapshot and turn state as the live calls did when it was logged, without producing
// output, so a Context rebuilt from a log answers Snapshot, Replay and PermissionToolCall as the live one.
// Frames must come in log order. The frame's content was translated (bounded, redacted, messageIds minted)
// before it was logged: Restore takes it as it is. The turn boundaries come from the
// `_gateway/turn_started` and `_gateway/turn_ended` notes the session logs around BeginTurn and EndTurn.
func (c *Context) Restore(frame []byte) (RestoreInfo, error) {
	if !rawjson.Valid(frame) {
		return RestoreInfo{}, errNotLogged // the live path gets parsed JSON from the SDK; a store may not
	}
	var idRaw, methodRaw, params []byte
	if err := rawjson.EachMember(frame, func(m rawjson.Member) bool {
		switch string(m.Key(frame)) {
		case "id":
			idRaw = m.Value(frame)
		case "method":
			methodRaw = m.Value(frame)
		case "params":
			params = m.Value(frame)
		}
		return true
	}); err != nil {
		return RestoreInfo{}, fmt.Errorf("restore: %w", err)
	}
	method, ok := rawjson.DecodeString(methodRaw)
	if !ok || len(params) == 0 || params[0] != '{' {
		return RestoreInfo{}, errNotLogged
	}
	info := RestoreInfo{Method: method, Params: params}
	if err := info.Meta.parse(rawjson.Lookup(rawjson.Lookup(params, "_meta"), "gateway")); err != nil {
		return info, fmt.Errorf("restore %s: %w", method, err)
	}
	switch {
	case method == "session/update":
		c.restoring = true
		u, err := c.update(params, nil)
		c.restoring = false
		if err != nil {
			return info, fmt.Errorf("restore: %w", err)
		}
		info.Kind = u.Kind
		info.Text, _ = rawjson.DecodeString(u.text)
	case method == "session/request_permission":
		id, ok := rawjson.DecodeString(idRaw)
		if !ok {
			return info, errors.New("restore: permission request without a string id")
		}
		req, err := ask.ParsePermissionRequest(params)
		if err != nil {
			return info, fmt.Errorf("restore: %w", err)
		}
		info.Permission = &RestoredPermission{ID: id, Request: req, ToolCall: req.ToolCall, Deadline: info.Meta.Deadline}
	case method == "elicitation/create":
		id, ok := rawjson.DecodeString(idRaw)
		if !ok {
			return info, errors.New("restore: elicitation request without a string id")
		}
		req, err := ask.ParseElicitationRequest(params)
		if err != nil {
			return info, fmt.Errorf("restore: %w", err)
		}
		info.Elicitation = &RestoredElicitation{ID: id, Request: req, Deadline: info.Meta.Deadline}
	case len(method) > len("_gateway/") && method[:len("_gateway/")] == "_gateway/":
		c.Note(method, params)
	}
	return info, nil
}

// parse reads a logged stamp, a value of a frame Restore found valid. A frame without one is an error: every
// logged frame has its seq. It reads the stamp as json.Unmarshal into its fields would (keys without escapes
// matched case-insensitively, the last one wins, null leaves a field as it is, a value of another type is an
// error), without reflection: a follower parses one stamp per frame it is fed.
func (m *GatewayMeta) parse(raw []byte) error {
	if len(raw) == 0 {
		return errors.New("no _meta.gateway stamp")
	}
	var s GatewayMeta
	var bad string
	err := rawjson.EachMember(raw, func(mb rawjson.Member) bool {
		v := mb.Value(raw)
		if string(v) == "null" {
			return true
		}
		var ok bool
		switch k := stampKey(raw, mb); {
		case bytes.EqualFold(k, []byte("seq")):
			var err error
			s.Seq, err = strconv.ParseUint(string(v), 10, 64)
			ok = err == nil
		case bytes.EqualFold(k, []byte("epoch")):
			s.Epoch, ok = stampString(v)
		case bytes.EqualFold(k, []byte("turnId")):
			s.TurnID, ok = stampString(v)
		case bytes.EqualFold(k, []byte("permissionId")):
			s.PermissionID, ok = stampString(v)
		case bytes.EqualFold(k, []byte("deadline")):
			s.Deadline, ok = stampString(v)
		case bytes.EqualFold(k, []byte("truncated")):
			s.Truncated, ok = decodeBool(v)
		case bytes.EqualFold(k, []byte("resent")):
			s.Resent, ok = decodeBool(v)
		default:
			ok = true
		}
		if !ok {
			bad = string(mb.Key(raw))
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return fmt.Errorf("_meta.gateway: %w", err)
	case bad != "":
		return fmt.Errorf("_meta.gateway: field %q has the wrong type", bad)
	case s.Seq == 0:
		return errors.New("_meta.gateway without a seq")
	}
	*m = s
	return nil
}

// stampKey is a stamp member's key as json.Unmarshal matches it: escapes decoded.
func stampKey(raw []byte, mb rawjson.Member) []byte {
	k := mb.Key(raw)
	if bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	var decoded string
	if json.Unmarshal(raw[mb.KeyStart:mb.KeyEnd], &decoded) != nil {
		return k
	}
	return []byte(decoded)
}

// stampString reads a raw JSON string of a stamp as json.Unmarshal does: invalid UTF-8 becomes U+FFFD, as
// the gateway's own frames would carry it. Only such strings take encoding/json's path.
func stampString(v []byte) (string, bool) {
	if s, ok := rawjson.DecodeString(v); ok && utf8.ValidString(s) {
		return s, true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}

// decodeBool reads a raw JSON boolean.
func decodeBool(v []byte) (b, ok bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// adoptID is what a restored chunk with messageId idRaw does to the message stream: an id this Context
// minted (`<turn>-m<n>` of the current turn) continues as the stream it was, so the next id-less chunk after
// the restore gets the id it would have got live, and later mints never reuse n.
func (c *Context) adoptID(kind entryKind, idRaw []byte) {
	prefix := "noturn"
	if c.turn != nil {
		prefix = c.turn.id
	}
	prefix += "-m"
	if len(idRaw) > len(prefix) && string(idRaw[:len(prefix)]) == prefix {
		if n, err := strconv.ParseUint(string(idRaw[len(prefix):]), 10, 64); err == nil {
			c.idSeq = max(c.idSeq, n)
			c.stream = stream{kind: kind, idRaw: append([]byte(nil), idRaw...)}
			return
		}
	}
	c.stream = stream{kind: kind}
}
