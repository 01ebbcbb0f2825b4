package translate

// Replay returns the `session/update` params an ACP client gets for `session/load`: the history as clean
// transcript, from the snapshot (so it has the snapshot's bounds: evicted entries are not replayed).
//
// Included, in order of first appearance:
//   - user messages, one `user_message_chunk` per content block (consecutive text merged), with messageId;
//   - agent messages, likewise as `agent_message_chunk`, of turns that ended normally, of the turn still
//     running (a client loading mid-turn then receives the rest live) and from outside any turn;
//   - every tool call as one `tool_call` carrying its final merged state, whatever its turn's outcome: the
//     call happened and may have changed files. A call the gateway closed shows `status:"failed"` with
//     `_meta.gateway.reason`; a missing title becomes "" (ToolCall requires one).
//
// After the transcript: the last `plan`, `available_commands_update` and `session_info_update`, when known.
// (Mode and config options travel in the `session/load` response; usage is live-only.)
//
// Left out:
//   - thoughts (reasoning is ephemeral, not transcript);
//   - agent messages of turns that ended cancelled or failed: a partial answer is evidence of a failed turn,
//     not content the user accepted;
//   - the gateway's notes (`_gateway/turn_ended` with its error, permission outcomes): they are not
//     `session/update`s and belong to the audit log, not the transcript.
func (c *Context) Replay() [][]byte {
	s := &c.snap
	var out [][]byte
	for _, e := range s.entries[s.head:] {
		switch e.kind {
		case entryThought:
			continue
		case entryAgent:
			if e.turn != nil && (e.turn.outcome == turnCancelled || e.turn.outcome == turnFailed) {
				continue
			}
			fallthrough
		case entryUser:
			name := "user_message_chunk"
			if e.kind == entryAgent {
				name = "agent_message_chunk"
			}
			for _, b := range e.blocks {
				upd := make([]byte, 0, len(b.text)+len(b.raw)+len(e.idRaw)+96)
				upd = append(upd, `{"sessionUpdate":"`...)
				upd = append(upd, name...)
				upd = append(upd, `","content":`...)
				upd = appendBlock(upd, b)
				upd = append(upd, `,"messageId":"`...)
				upd = append(upd, e.idRaw...)
				upd = append(upd, `"}`...)
				out = append(out, c.wrapParams(upd))
			}
		case entryTool:
			prefix := `"sessionUpdate":"tool_call"`
			if e.tool.get("title") == nil {
				prefix += `,"title":""`
			}
			out = append(out, c.wrapParams(e.tool.appendObject(nil, prefix)))
		}
	}
	if s.plan != nil {
		upd := append([]byte(`{"sessionUpdate":"plan","entries":`), s.plan...)
		out = append(out, c.wrapParams(append(upd, '}')))
	}
	if s.availableCommands != nil {
		upd := append([]byte(`{"sessionUpdate":"available_commands_update","availableCommands":`), s.availableCommands...)
		out = append(out, c.wrapParams(append(upd, '}')))
	}
	if len(s.sessionInfo) > 0 {
		info := &toolCall{fields: s.sessionInfo}
		out = append(out, c.wrapParams(info.appendObject(nil, `"sessionUpdate":"session_info_update"`)))
	}
	return out
}
