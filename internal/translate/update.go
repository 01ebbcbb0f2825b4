package translate

import (
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// knownKinds are the `sessionUpdate` values of schema 0.13.0; Update.Kind reuses these strings instead of
// allocating one per frame.
var knownKinds = [...]string{
	"agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call", "tool_call_update",
	"plan", "available_commands_update", "current_mode_update", "config_option_update",
	"session_info_update", "usage_update",
}

func kindOf(raw []byte) string {
	body, ok := rawjson.StringBody(raw)
	if !ok {
		return ""
	}
	for _, k := range knownKinds {
		if string(body) == k {
			return k
		}
	}
	s, _ := rawjson.DecodeString(raw)
	return s
}

var errNoUpdate = errors.New("session/update: params have no update object")

// Update translates one agent `session/update` params object for clients and folds it into the snapshot.
//
// The params are copied byte for byte except: the top-level sessionId becomes the gateway's (added when
// absent); an id-less message/thought/user chunk gets a messageId (msgid.go); tool-call fields are bounded
// (bound.go) and, with Config.Redact, redacted (redact.go). Unknown variants, unknown fields, null values and
// the agent's `_meta` (params-level and update-level) pass through untouched, in wire order.
func (c *Context) Update(params []byte) (Update, error) {
	u, err := c.update(params, nil)
	if err != nil {
		return Update{}, err
	}
	if u.text != nil {
		u.Text, _ = rawjson.DecodeString(u.text)
	}
	return u.Update, nil
}

// UpdateFrame is Update for the event log: the same translation, laid out in place as the complete
// `{"jsonrpc":"2.0","method":"session/update","params":…}` frame with room for the gateway's stamp, which
// Update.Frame writes once the log has assigned the seq. m is that stamp without its seq; Truncated is set
// when the update was bounded. The whole update then costs one allocation, the frame, and the params are
// scanned once instead of again for `_meta`.
//
// Params aliases the frame and is only valid until Frame is called. Text is left empty: WriteText writes it
// without a string per update.
func (c *Context) UpdateFrame(params []byte, m GatewayMeta) (FrameUpdate, error) {
	return c.update(params, &m)
}

// maxScanned is how many members of an object one scan remembers; objects with more are scanned again when
// written.
const maxScanned = 12

// scanned is an object's members as one rawjson.EachMember pass found them, so writing the object does not
// scan it again.
type scanned struct {
	n int // members found; when > maxScanned, m holds only the first maxScanned
	m [maxScanned]rawjson.Member
}

func (s *scanned) add(m rawjson.Member) {
	if s.n < maxScanned {
		s.m[s.n] = m
	}
	s.n++
}

// each calls fn for every member of b (the object s was scanned from), in wire order.
func (s *scanned) each(b []byte, fn func(m rawjson.Member)) {
	if s.n > maxScanned {
		_ = rawjson.EachMember(b, func(m rawjson.Member) bool { fn(m); return true })
		return
	}
	for _, m := range s.m[:s.n] {
		fn(m)
	}
}

func (c *Context) update(params []byte, stamp *GatewayMeta) (FrameUpdate, error) {
	params = rawjson.ValidUTF8(params)
	var upd []byte
	var pm, um scanned
	if err := rawjson.EachMember(params, func(m rawjson.Member) bool {
		pm.add(m)
		if string(m.Key(params)) == "update" {
			upd = m.Value(params)
		}
		return true
	}); err != nil {
		return FrameUpdate{}, fmt.Errorf("session/update: %w", err)
	}
	if len(upd) == 0 || upd[0] != '{' {
		return FrameUpdate{}, errNoUpdate
	}
	var kindRaw, msgID, content []byte
	hasID := false
	if err := rawjson.EachMember(upd, func(m rawjson.Member) bool {
		um.add(m)
		switch string(m.Key(upd)) {
		case "sessionUpdate":
			kindRaw = m.Value(upd)
		case "messageId":
			msgID = m.Value(upd)
			hasID = !rawjson.IsNull(msgID)
		case "content":
			content = m.Value(upd)
		}
		return true
	}); err != nil {
		return FrameUpdate{}, fmt.Errorf("session/update: update: %w", err)
	}
	u := FrameUpdate{Update: Update{Kind: kindOf(kindRaw)}}
	out := upd
	var splice []byte // a minted messageId to add to the update
	switch u.Kind {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		kind := chunkEntryKind(u.Kind)
		var idRaw []byte
		if body, ok := rawjson.StringBody(msgID); ok && hasID {
			idRaw = body
			if c.restoring {
				c.adoptID(kind, body)
			} else {
				c.stream = stream{kind: kind}
			}
		} else {
			idRaw = c.mintedID(kind)
			splice = idRaw
		}
		if len(content) > 0 && content[0] == '{' {
			typ, text := blockText(content)
			c.foldBlock(kind, c.turn, idRaw, content, typ, text)
			if kind == entryAgent && string(typ) == `"text"` && text != nil {
				u.text = text
			}
		}
	case "tool_call", "tool_call_update":
		var err error
		out, u.Truncated, err = c.toolUpdate(upd, u.Kind == "tool_call")
		if err != nil {
			return FrameUpdate{}, fmt.Errorf("session/update: update: %w", err)
		}
	default:
		c.foldState(u.Kind, upd)
	}
	if c.restoring {
		return u, nil // folded; the frame was logged already
	}
	n := len(params) - len(upd) + len(out) + len(c.cfg.SessionID) + len(splice) + 32
	if stamp == nil {
		u.Params, _ = c.appendParams(make([]byte, 0, n), params, &pm, out, &um, splice)
		return u, nil
	}
	u.stamp = *stamp
	u.stamp.Truncated = u.stamp.Truncated || u.Truncated
	dst := make([]byte, 0, len(updateFramePrefix)+n+u.stamp.maxStampLen())
	dst = append(dst, updateFramePrefix...)
	dst, u.meta = c.appendParams(dst, params, &pm, out, &um, splice)
	u.frame = dst
	u.Params = dst[len(updateFramePrefix):]
	return u, nil
}

func chunkEntryKind(k string) entryKind {
	switch k {
	case "agent_message_chunk":
		return entryAgent
	case "agent_thought_chunk":
		return entryThought
	}
	return entryUser
}

// appendParams writes params (whose members pm holds) with the gateway's session id and upd as the update.
// With splice set, upd (whose members um holds) gets `"messageId":"<splice>"` (replacing a null messageId,
// else appended last). It also reports where in dst the gateway's stamp goes (see metaSplice).
func (c *Context) appendParams(dst, params []byte, pm *scanned, upd []byte, um *scanned, splice []byte) ([]byte, metaSplice) {
	dst = append(dst, '{')
	first, sawSession, metas := true, false, 0
	var ms metaSplice
	pm.each(params, func(m rawjson.Member) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		switch string(m.Key(params)) {
		case "sessionId":
			sawSession = true
			dst = append(dst, `"sessionId":`...)
			dst = appendString(dst, c.cfg.SessionID)
		case "update":
			dst = append(dst, `"update":`...)
			if splice == nil {
				dst = append(dst, upd...)
			} else {
				dst = appendWithMessageID(dst, upd, um, splice)
			}
		case "_meta":
			metas++
			if at, comma, ok := metaInsertAt(params[m.KeyStart:m.ValEnd]); ok {
				ms = metaSplice{at: len(dst) + at, comma: comma}
			}
			dst = append(dst, params[m.KeyStart:m.ValEnd]...)
		default:
			dst = append(dst, params[m.KeyStart:m.ValEnd]...)
		}
	})
	if !sawSession {
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, `"sessionId":`...)
		dst = appendString(dst, c.cfg.SessionID)
	}
	switch metas {
	case 0:
		ms = metaSplice{at: len(dst), add: true}
	case 1:
	default:
		ms = metaSplice{} // several `_meta` members: AppendNotification's general path
	}
	return append(dst, '}'), ms
}

func appendWithMessageID(dst, upd []byte, um *scanned, idRaw []byte) []byte {
	dst = append(dst, '{')
	first, done := true, false
	um.each(upd, func(m rawjson.Member) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if string(m.Key(upd)) == "messageId" {
			done = true
			dst = append(dst, `"messageId":"`...)
			dst = append(dst, idRaw...)
			dst = append(dst, '"')
			return
		}
		dst = append(dst, upd[m.KeyStart:m.ValEnd]...)
	})
	if !done {
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, `"messageId":"`...)
		dst = append(dst, idRaw...)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}
