package translate

import (
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// UserPrompt returns the `session/update` params the session logs for a user's prompt, one
// `user_message_chunk` per content block, all sharing the messageId `<turnId>-user`, and folds them into
// the snapshot. Blocks that are not JSON objects are skipped (the agent would reject them anyway). The
// prompt is not redacted or bounded: it is what the user typed, and the log's own frame limit applies.
func (c *Context) UserPrompt(turnID string, blocks []json.RawMessage) [][]byte {
	t := c.turns.get(turnID)
	idQ := appendString(nil, turnID+"-user")
	idRaw := idQ[1 : len(idQ)-1]
	out := make([][]byte, 0, len(blocks))
	for _, b := range blocks {
		b = rawjson.ValidUTF8(b)
		if !json.Valid(b) || rawjson.EachMember(b, func(rawjson.Member) bool { return true }) != nil {
			continue
		}
		upd := make([]byte, 0, len(b)+len(idQ)+64)
		upd = append(upd, `{"sessionUpdate":"user_message_chunk","content":`...)
		upd = append(upd, b...)
		upd = append(upd, `,"messageId":`...)
		upd = append(upd, idQ...)
		upd = append(upd, '}')
		out = append(out, c.wrapParams(upd))
		c.foldChunk(entryUser, t, idRaw, b)
	}
	c.stream = stream{}
	return out
}
