package translate

import (
	"encoding/json"
	"strconv"
)

// SnapshotView is the snapshot's state frozen at one seq, so that the snapshot document (up to
// SnapshotMaxBytes and more) is built without the lock that guards the Context: an agent's updates must not
// wait for a client loading the transcript. Freezing copies only the small structs whose fields the fold
// rewrites in place (an entry's blocks, a tool call's fields, sessionInfo); the bytes they point to are never
// changed once written — text grows by appending past what the view holds, every other value is replaced by a
// new slice — so the view shares them.
type SnapshotView struct {
	seq               uint64
	entries           []frozenEntry
	bytes             int
	plan              []byte
	currentModeID     []byte
	configOptions     []byte
	usage             []byte
	turnUsage         []byte
	sessionInfo       []toolField
	availableCommands []byte
	terminals         []terminalSnap
	truncated         bool
}

type frozenEntry struct {
	kind      entryKind
	turn      *turnRec // nil outside a turn; only its id (immutable) is read
	idRaw     []byte
	blocks    []block       // messages
	fields    []toolField   // tool calls
	term      *terminalTail // tool calls: the accumulated terminal output, frozen
	continued bool
}

// FreezeSnapshot captures the snapshot as of the log's seq; call it under the lock that guards c (with the seq
// of the last frame logged under it) and JSON on the result after unlocking. It costs a few allocations and a
// copy of the entries' small structs, not of their content.
func (c *Context) FreezeSnapshot(seq uint64) *SnapshotView {
	s := &c.snap
	live := s.entries[s.head:]
	nBlocks, nFields := 0, len(s.sessionInfo)
	for _, e := range live {
		if e.kind == entryTool {
			nFields += len(e.tool.fields)
		} else {
			nBlocks += len(e.blocks)
		}
	}
	// One backing array each for all blocks and all fields: the entries' slices are windows of them.
	blocks, fields := make([]block, 0, nBlocks), make([]toolField, 0, nFields)
	v := &SnapshotView{
		seq: seq, entries: make([]frozenEntry, len(live)), bytes: s.bytes, truncated: s.truncated,
		plan: s.plan, currentModeID: s.currentModeID, configOptions: s.configOptions, usage: s.usage, turnUsage: s.turnUsage,
		availableCommands: s.availableCommands, terminals: freezeTerminals(s.terminals),
	}
	for i, e := range live {
		f := frozenEntry{kind: e.kind, turn: e.turn, idRaw: e.idRaw, continued: e.continued}
		if e.kind == entryTool {
			at := len(fields)
			fields = append(fields, e.tool.fields...)
			f.fields = fields[at:len(fields):len(fields)]
			f.term = e.tool.term.frozen()
		} else {
			at := len(blocks)
			blocks = append(blocks, e.blocks...)
			f.blocks = blocks[at:len(blocks):len(blocks)]
		}
		v.entries[i] = f
	}
	if len(s.sessionInfo) > 0 {
		v.sessionInfo = append(fields, s.sessionInfo...)[len(fields):]
	}
	return v
}

// JSON is the snapshot document (see snapshot.go). It needs no lock.
func (v *SnapshotView) JSON() json.RawMessage {
	out := make([]byte, 0, 256+v.bytes+64*len(v.entries))
	out = append(out, `{"seq":`...)
	out = strconv.AppendUint(out, v.seq, 10)
	out = append(out, `,"entries":[`...)
	for i := range v.entries {
		if i > 0 {
			out = append(out, ',')
		}
		out = v.entries[i].appendJSON(out)
	}
	out = append(out, `],"plan":`...)
	if v.plan != nil {
		out = append(out, `{"entries":`...)
		out = append(out, v.plan...)
		out = append(out, '}')
	} else {
		out = append(out, "null"...)
	}
	appendOpt := func(key string, val []byte) {
		if val != nil {
			out = append(out, `,"`...)
			out = append(out, key...)
			out = append(out, `":`...)
			out = append(out, val...)
		}
	}
	appendOpt("currentModeId", v.currentModeID)
	appendOpt("configOptions", v.configOptions)
	out = appendUsage(out, v.usage, v.turnUsage)
	if len(v.sessionInfo) > 0 {
		info := &toolCall{fields: v.sessionInfo}
		appendOpt("sessionInfo", info.appendObject(nil, ""))
	}
	appendOpt("availableCommands", v.availableCommands)
	out = appendTerminals(out, v.terminals)
	if v.truncated {
		out = append(out, `,"truncated":true`...)
	}
	return append(out, '}')
}

func (e *frozenEntry) appendJSON(out []byte) []byte {
	out = append(out, `{"kind":"`...)
	out = append(out, entryKindNames[e.kind]...)
	out = append(out, '"')
	if e.kind != entryTool {
		out = append(out, `,"messageId":"`...)
		out = append(out, e.idRaw...)
		out = append(out, '"')
	}
	if e.turn != nil {
		out = append(out, `,"turnId":`...)
		out = appendString(out, e.turn.id)
	}
	if e.kind == entryTool {
		out = append(out, `,"toolCall":`...)
		out = (&toolCall{fields: e.fields, term: e.term}).appendObject(out, "")
		if e.continued {
			out = append(out, `,"continued":true`...)
		}
		return append(out, '}')
	}
	out = append(out, `,"content":[`...)
	for i, b := range e.blocks {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendBlock(out, b)
	}
	return append(out, "]}"...)
}
