package translate

import "strconv"

// Message ids. ACP's (unstable) `messageId` groups chunks into messages; agents that omit it leave a client
// guessing where one message ends, so the gateway gives every id-less chunk one:
//
//   - chunks of one message share one id: consecutive id-less chunks of the same kind (answer, thought, user)
//     continue the current message;
//   - a thought is a different message from the answer, so switching kind starts a new message;
//   - anything that appears between chunks in the transcript (a new tool call, a user prompt, a turn
//     boundary) ends the message, and the next chunk starts a new one. The snapshot and the UI then show the
//     answer interleaved with the tool calls in wire order instead of one answer block above them all;
//   - ids are `<turnId>-m<n>` (`noturn-m<n>` outside a turn) with n counting every id the Context ever
//     minted, so an id is never reused across turns, even when a turn id were;
//   - a chunk that carries its own messageId is forwarded untouched, and the next id-less chunk starts a new
//     message (the gateway does not guess it continues the agent's).
//
// The user's prompt, logged by UserPrompt, uses `<turnId>-user`.
//
// Minted ids are readable rather than UUIDs (which the draft field asks agents for) so logs and golden
// files stay legible; clients treat ids as opaque strings.

// stream is the message the last chunk belonged to.
type stream struct {
	kind  entryKind // 0: no message is being streamed
	idRaw []byte    // minted id as the raw body of a JSON string; nil when the agent supplied the id
}

// mintedID returns the id for an id-less chunk of kind, continuing the current message when it can.
func (c *Context) mintedID(kind entryKind) []byte {
	if c.stream.kind == kind && c.stream.idRaw != nil {
		return c.stream.idRaw
	}
	c.idSeq++
	prefix := "noturn"
	if c.turn != nil {
		prefix = c.turn.id
	}
	q := appendString(nil, prefix+"-m"+strconv.FormatUint(c.idSeq, 10))
	c.stream = stream{kind: kind, idRaw: q[1 : len(q)-1]}
	return c.stream.idRaw
}
