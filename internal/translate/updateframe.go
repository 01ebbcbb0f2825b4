package translate

import (
	"bytes"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// FrameUpdate is an agent update translated by Context.UpdateFrame: an Update laid out as its log frame,
// waiting for its seq.
type FrameUpdate struct {
	// Params aliases the frame: valid until Frame is called. Text is empty; see WriteText.
	Update

	text  []byte      // the raw JSON string Update.Text is decoded from; nil when Text would be empty
	frame []byte      // `{"jsonrpc":"2.0","method":"session/update","params":` + Params, with spare capacity
	meta  metaSplice  // where the stamp goes in frame
	stamp GatewayMeta // the stamp without its seq
}

// updateFramePrefix is what AppendNotification writes before the params of a `session/update`.
const updateFramePrefix = `{"jsonrpc":"2.0","method":"session/update","params":`

// metaSplice is where AppendNotification's `_meta.gateway` stamp lands in params translate wrote, when that
// is a plain insertion: at == 0 means it is not (the general path runs). With add, params have no `_meta`
// and `,"_meta":{"gateway":…}` goes before the closing brace at at; otherwise `[,]"gateway":…` goes before
// the closing brace of the one `_meta` object, at at.
type metaSplice struct {
	at         int
	add, comma bool
}

// metaInsertAt reports where, in one `"_meta":{…}` member as copied into params (raw), appendStampedParams
// would put the gateway's stamp, when its output is raw with the stamp inserted: the member is written
// without whitespace outside its inner members' own bytes, is an object, and carries no `gateway` key of the
// agent's (which the stamp replaces). Anything else takes the general path.
func metaInsertAt(raw []byte) (at int, comma, ok bool) {
	const key = `"_meta":`
	if len(raw) < len(key)+2 || string(raw[:len(key)]) != key || raw[len(key)] != '{' {
		return 0, false, false
	}
	v := raw[len(key):]
	want, n, bad := 1, 0, false
	if err := rawjson.EachMember(v, func(m rawjson.Member) bool {
		if m.KeyStart != want || string(m.Key(v)) == "gateway" {
			bad = true
			return false
		}
		want = m.ValEnd + 1 // just past the ',' (or the closing brace)
		n++
		return true
	}); err != nil || bad || want != len(v)-1+boolInt(n > 0) {
		return 0, false, false
	}
	return len(raw) - 1, n > 0, true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// maxStampLen bounds what Frame adds to the params: the stamp with the longest seq, the `_meta` member
// around it and the frame's closing brace.
func (m GatewayMeta) maxStampLen() int {
	n := len(`,"_meta":{"gateway":{"seq":`) + 20 + len(`}}}`)
	if m.Epoch != "" {
		n += len(`,"epoch":""`) + len(m.Epoch)
	}
	if m.TurnID != "" {
		n += len(`,"turnId":""`) + len(m.TurnID)
	}
	if m.PermissionID != "" {
		n += len(`,"permissionId":""`) + len(m.PermissionID)
	}
	if m.Deadline != "" {
		n += len(`,"deadline":""`) + len(m.Deadline)
	}
	if m.Truncated {
		n += len(`,"truncated":true`)
	}
	if m.Resent {
		n += len(`,"resent":true`)
	}
	return n
}

// Frame completes the frame with seq and returns it: byte for byte what
// AppendNotification(nil, "session/update", Params, stamp with seq) returns. It writes in place, in the
// capacity UpdateFrame reserved, and may be called once.
func (u *FrameUpdate) Frame(seq uint64) ([]byte, error) {
	m := u.stamp
	m.Seq = seq
	b, at := u.frame, u.meta.at
	if at == 0 {
		dst := make([]byte, 0, len(b)+m.maxStampLen())
		u.frame, u.Params = nil, nil
		return AppendNotification(dst, "session/update", b[len(updateFramePrefix):], m)
	}
	u.frame, u.Params = nil, nil
	var sb [192]byte
	if u.meta.add {
		// The closing brace of params is at `at`, the last byte.
		b = append(b[:at], `,"_meta":{"gateway":`...)
		b = m.appendTo(b)
		return append(b, "}}}"...), nil
	}
	ins := sb[:0]
	if u.meta.comma {
		ins = append(ins, ',')
	}
	ins = append(ins, `"gateway":`...)
	ins = m.appendTo(ins)
	end := len(b)
	b = append(b, ins...) // grows b by len(ins); the bytes are placed below
	copy(b[at+len(ins):], b[at:end])
	copy(b[at:], ins)
	return append(b, '}'), nil
}

// TextSink is where a turn's agent text is collected: a strings.Builder, or anything that keeps text the
// same way (the session keeps it in pooled pieces).
type TextSink interface {
	Len() int
	Write(p []byte) (int, error)
	WriteString(s string) (int, error)
}

// WriteText appends the update's agent message text (what Update returns as Text) to sb, without a string per
// update, keeping sb at most limit bytes (limit <= 0: no bound). Past the limit the text is cut on a rune
// boundary and WriteText reports truncated; the caller then stops collecting.
func (u *FrameUpdate) WriteText(sb TextSink, limit int) (truncated bool) {
	body, ok := rawjson.StringBody(u.text)
	if !ok {
		return false
	}
	if bytes.IndexByte(body, '\\') < 0 {
		n := fitText(body, limit-sb.Len(), limit)
		sb.Write(body[:n])
		return n < len(body)
	}
	s, _ := rawjson.DecodeString(u.text)
	n := fitText(s, limit-sb.Len(), limit)
	sb.WriteString(s[:n])
	return n < len(s)
}

// fitText is how much of text fits in room bytes, cut on a rune boundary; all of it when limit <= 0.
func fitText[T string | []byte](text T, room, limit int) int {
	if limit <= 0 || len(text) <= room {
		return len(text)
	}
	n := max(room, 0)
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return n
}

// WriteBoundedText is WriteText for text a caller already has (an update Restore folded): sb stays at most
// limit bytes (limit <= 0: no bound), cut on a rune boundary; it reports whether text was cut.
func WriteBoundedText(sb TextSink, text string, limit int) (truncated bool) {
	n := fitText(text, limit-sb.Len(), limit)
	sb.WriteString(text[:n])
	return n < len(text)
}
