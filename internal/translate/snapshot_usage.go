package translate

import "github.com/acp-gateway/gateway/internal/translate/rawjson"

// The snapshot's usage object is the last usage_update (context used and size, cost) with, as lastTurn, the
// token usage the last ended turn reported: `{"used","size","cost"?,…,"lastTurn"?:{"turnId",<ACP Usage>}}`.

// foldTurnUsage records the token usage `_gateway/turn_ended` logged for turnID; a turn that reported none
// (or a malformed one) clears it, so lastTurn never names an older turn's tokens.
func (c *Context) foldTurnUsage(turnID string, usage []byte) {
	s := &c.snap
	s.turnUsage = nil
	if len(usage) == 0 || usage[0] != '{' {
		return
	}
	out := appendString([]byte(`{"turnId":`), turnID)
	if rawjson.EachMember(usage, func(m rawjson.Member) bool {
		if string(m.Key(usage)) != "turnId" {
			out = append(out, ',')
			out = append(out, usage[m.KeyStart:m.ValEnd]...)
		}
		return true
	}) != nil {
		return
	}
	s.turnUsage = append(out, '}')
}

// appendUsage writes the snapshot's `,"usage":{…}` member, or nothing when there is no usage at all.
func appendUsage(out, usage, turnUsage []byte) []byte {
	if usage == nil && turnUsage == nil {
		return out
	}
	out = append(out, `,"usage":`...)
	if turnUsage == nil {
		return append(out, usage...)
	}
	if len(usage) > 2 { // the usage_update's members, then lastTurn
		out = append(out, usage[:len(usage)-1]...)
		out = append(out, ',')
	} else {
		out = append(out, '{')
	}
	out = append(out, `"lastTurn":`...)
	out = append(out, turnUsage...)
	return append(out, '}')
}
