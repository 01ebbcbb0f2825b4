package translate

import (
	"errors"
	"fmt"
)

// knownKinds are the `sessionUpdate` values of schema 0.13.0; Update.Kind reuses these strings instead of
// allocating one per frame.
var knownKinds = [...]string{
	"agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call", "tool_call_update",
	"plan", "available_commands_update", "current_mode_update", "config_option_update",
	"session_info_update", "usage_update",
}

func kindOf(raw []byte) string {
	body, ok := stringBody(raw)
	if !ok {
		return ""
	}
	for _, k := range knownKinds {
		if string(body) == k {
			return k
		}
	}
	s, _ := decodeString(raw)
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
	var upd []byte
	if err := eachMember(params, func(m member) bool {
		if string(m.key(params)) == "update" {
			upd = m.value(params)
		}
		return true
	}); err != nil {
		return Update{}, fmt.Errorf("session/update: %w", err)
	}
	if len(upd) == 0 || upd[0] != '{' {
		return Update{}, errNoUpdate
	}
	var kindRaw, msgID, content []byte
	hasID := false
	if err := eachMember(upd, func(m member) bool {
		switch string(m.key(upd)) {
		case "sessionUpdate":
			kindRaw = m.value(upd)
		case "messageId":
			msgID = m.value(upd)
			hasID = !isNull(msgID)
		case "content":
			content = m.value(upd)
		}
		return true
	}); err != nil {
		return Update{}, fmt.Errorf("session/update: update: %w", err)
	}
	u := Update{Kind: kindOf(kindRaw)}
	out := upd
	var splice []byte // a minted messageId to add to the update
	switch u.Kind {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		kind := chunkEntryKind(u.Kind)
		var idRaw []byte
		if body, ok := stringBody(msgID); ok && hasID {
			idRaw = body
			c.stream = stream{kind: kind}
		} else {
			idRaw = c.mintedID(kind)
			splice = idRaw
		}
		if len(content) > 0 && content[0] == '{' {
			typ, text := blockText(content)
			c.foldBlock(kind, c.turn, idRaw, content, typ, text)
			if kind == entryAgent && string(typ) == `"text"` {
				u.Text, _ = decodeString(text)
			}
		}
	case "tool_call", "tool_call_update":
		var err error
		out, u.Truncated, err = c.toolUpdate(upd, u.Kind == "tool_call")
		if err != nil {
			return Update{}, fmt.Errorf("session/update: update: %w", err)
		}
	default:
		c.foldState(u.Kind, upd)
	}
	u.Params = c.appendParams(make([]byte, 0, len(params)+len(c.cfg.SessionID)+len(splice)+24), params, out, splice)
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

// appendParams writes params with the gateway's session id and upd as the update. With splice set, upd
// gets `"messageId":"<splice>"` (replacing a null messageId, else appended last).
func (c *Context) appendParams(dst, params, upd, splice []byte) []byte {
	dst = append(dst, '{')
	first, sawSession := true, false
	_ = eachMember(params, func(m member) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		switch string(m.key(params)) {
		case "sessionId":
			sawSession = true
			dst = append(dst, `"sessionId":`...)
			dst = appendString(dst, c.cfg.SessionID)
		case "update":
			dst = append(dst, `"update":`...)
			if splice == nil {
				dst = append(dst, upd...)
			} else {
				dst = appendWithMessageID(dst, upd, splice)
			}
		default:
			dst = append(dst, params[m.keyStart:m.valEnd]...)
		}
		return true
	})
	if !sawSession {
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, `"sessionId":`...)
		dst = appendString(dst, c.cfg.SessionID)
	}
	return append(dst, '}')
}

func appendWithMessageID(dst, upd, idRaw []byte) []byte {
	dst = append(dst, '{')
	first, done := true, false
	_ = eachMember(upd, func(m member) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if string(m.key(upd)) == "messageId" {
			done = true
			dst = append(dst, `"messageId":"`...)
			dst = append(dst, idRaw...)
			dst = append(dst, '"')
			return true
		}
		dst = append(dst, upd[m.keyStart:m.valEnd]...)
		return true
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
