package translate

import (
	"encoding/json"
	"slices"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// The snapshot folds everything a client would have seen into one document, so a client that joins late or
// lost its place (`_gateway/resync_required`) can rebuild the transcript without the log:
//
//	{"seq":N,
//	 "entries":[{"kind":"user_message"|"agent_message"|"agent_thought","messageId","turnId","content":[ContentBlock…]}
//	          | {"kind":"tool_call","turnId","toolCall":{merged ACP ToolCall},"continued"?:true}],
//	 "plan":{"entries":[…]}|null, "currentModeId"?, "configOptions"?, "usage"? (snapshot_usage.go), "sessionInfo"?,
//	 "availableCommands"?, "terminals"?:[…] (terminalsnap.go), "truncated"?:true}
//
// Entries are in order of first appearance; consecutive text blocks of one message are merged into one text
// block (other blocks are kept as sent). turnId is left out for entries produced outside a turn. A tool call of
// the running turn updated after its entry was evicted gets a new entry with its whole merged state, marked
// "continued": its first appearance is before the window, where a client that reads the log shows its card.
//
// Memory is bounded by three limits (Config, with defaults):
//   - SnapshotMaxMessageBytes (256 KiB): text and blocks kept per message, and per tool-call field (on top of
//     MaxFieldBytes); past it a message gets one `…[gateway: truncated]` marker and drops the rest;
//   - SnapshotMaxEntries (2000) and SnapshotMaxBytes (8 MiB over all entries): past either, the oldest
//     entries are evicted (a single entry larger than the byte budget is kept alone).
//
// So the snapshot holds at most max(SnapshotMaxBytes, one entry) of content, where one entry is at most
// SnapshotMaxMessageBytes (a message) or about 8 × SnapshotMaxMessageBytes (a tool call's fields). Whenever
// a bound cuts or evicts anything, the snapshot says `"truncated":true` from then on.

const (
	defaultSnapshotEntries      = 2000
	defaultSnapshotBytes        = 8 << 20
	defaultSnapshotMessageBytes = 256 << 10
)

type snapLimits struct {
	entries, bytes, messageBytes int // 0 = unbounded
}

func resolveLimits(cfg Config) snapLimits {
	pick := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return snapLimits{
		entries:      pick(cfg.SnapshotMaxEntries, defaultSnapshotEntries),
		bytes:        pick(cfg.SnapshotMaxBytes, defaultSnapshotBytes),
		messageBytes: pick(cfg.SnapshotMaxMessageBytes, defaultSnapshotMessageBytes),
	}
}

type entryKind uint8

const (
	entryNone entryKind = iota
	entryUser
	entryAgent
	entryThought
	entryTool
)

var entryKindNames = [...]string{"", "user_message", "agent_message", "agent_thought", "tool_call"}

type entry struct {
	kind    entryKind
	turn    *turnRec // nil outside a turn
	idRaw   []byte   // messageId as the raw body of a JSON string
	blocks  []block
	tool    *toolCall
	size    int
	full    bool // hit the per-message bound
	evicted bool
	// continued: a tool call's second entry, made when an update came after its first was evicted.
	continued bool
}

// block is one content block of a message: merged text (text = raw body of the JSON string) or any other
// block kept raw.
type block struct {
	text   []byte
	raw    []byte
	isText bool
}

type msgKey struct {
	turn *turnRec
	id   string
}

type snapshot struct {
	entries   []*entry // live entries are entries[head:]
	head      int
	bytes     int
	msgs      map[msgKey]*entry
	last      *entry // the message entry the last chunk went to (the hot path skips the map)
	truncated bool

	plan              []byte // raw entries array of the last plan; nil = no plan
	currentModeID     []byte
	configOptions     []byte
	usage             []byte      // the last usage_update without sessionUpdate and lastTurn
	turnUsage         []byte      // the last ended turn's token usage, {"turnId",…} (snapshot_usage.go)
	sessionInfo       []toolField // merged; null clears a field
	availableCommands []byte
	terminals         []*terminalSnap // gateway-served terminals, oldest first (terminalsnap.go)
}

func (s *snapshot) init() { s.msgs = map[msgKey]*entry{} }

const entryOverhead = 64

// truncatedMark ends a message the per-message bound cut.
const truncatedMark = "…[gateway: truncated]"

// messageEntry finds or creates the entry for a chunk.
func (c *Context) messageEntry(kind entryKind, turn *turnRec, idRaw []byte) *entry {
	s := &c.snap
	if e := s.last; e != nil && e.kind == kind && e.turn == turn && string(e.idRaw) == string(idRaw) && !e.evicted {
		return e
	}
	key := msgKey{turn, string(idRaw)}
	if e, ok := s.msgs[key]; ok && e.kind == kind {
		s.last = e
		return e
	}
	e := &entry{kind: kind, turn: turn, idRaw: append([]byte(nil), idRaw...), size: entryOverhead}
	s.msgs[key] = e
	s.last = e
	c.addEntry(e)
	return e
}

// foldChunk adds one content block to a message.
func (c *Context) foldChunk(kind entryKind, turn *turnRec, idRaw, content []byte) {
	if len(content) == 0 || content[0] != '{' {
		return
	}
	typ, text := blockText(content)
	c.foldBlock(kind, turn, idRaw, content, typ, text)
}

// blockText returns the raw type and text members of a content block.
func blockText(content []byte) (typ, text []byte) {
	_ = rawjson.EachMember(content, func(m rawjson.Member) bool {
		switch string(m.Key(content)) {
		case "type":
			typ = m.Value(content)
		case "text":
			text = m.Value(content)
		}
		return true
	})
	return typ, text
}

// foldBlock is foldChunk with the block's type and text already scanned (the hot path scans once).
func (c *Context) foldBlock(kind entryKind, turn *turnRec, idRaw, content, typ, text []byte) {
	e := c.messageEntry(kind, turn, idRaw)
	if e.full {
		return
	}
	capBytes := c.lim.messageBytes
	room := capBytes - (e.size - entryOverhead)
	if body, ok := rawjson.StringBody(text); ok && string(typ) == `"text"` {
		if capBytes > 0 && len(body) > room {
			body = body[:rawjson.SafeCut(body, max(room, 0))]
			c.markFull(e)
		}
		if n := len(e.blocks); n > 0 && e.blocks[n-1].isText {
			limit := 0
			if capBytes > 0 {
				limit = capBytes + len(truncatedMark)
			}
			e.blocks[n-1].text = appendDoubling(e.blocks[n-1].text, body, limit)
		} else {
			e.blocks = append(e.blocks, block{isText: true, text: append([]byte(nil), body...)})
		}
		if e.full {
			last := &e.blocks[len(e.blocks)-1]
			last.text = append(last.text, truncatedMark...)
		}
		c.resized(e, len(body))
		return
	}
	if capBytes > 0 && len(content) > room {
		c.markFull(e)
		e.blocks = append(e.blocks, block{isText: true, text: []byte(truncatedMark)})
		return
	}
	e.blocks = append(e.blocks, block{raw: append([]byte(nil), content...)})
	c.resized(e, len(content))
}

// appendDoubling is append(text, body...) that grows text by doubling, never past limit (when limit > 0)
// unless body needs it: a streamed message's text is appended to once per chunk, and append's growth by a
// quarter for large slices allocates about five times the text it ends with, doubling about twice.
func appendDoubling(text, body []byte, limit int) []byte {
	if need := len(text) + len(body); need > cap(text) {
		size := max(2*cap(text), need)
		if limit > 0 {
			size = max(min(size, limit), need)
		}
		grown := make([]byte, len(text), size)
		copy(grown, text)
		text = grown
	}
	return append(text, body...)
}

func (c *Context) markFull(e *entry) {
	e.full = true
	c.snap.truncated = true
}

// addToolEntry gives a tool call its place in the transcript: a new one, or one whose entry was evicted
// (continued).
func (c *Context) addToolEntry(tc *toolCall, continued bool) {
	e := &entry{kind: entryTool, turn: tc.turn, tool: tc, size: tc.size(), continued: continued}
	tc.entry = e
	c.snap.last = nil
	c.addEntry(e)
}

func (c *Context) addEntry(e *entry) {
	s := &c.snap
	s.entries = append(s.entries, e)
	s.bytes += e.size
	c.enforce()
}

// resized accounts for an entry that grew (or shrank) by delta bytes.
func (c *Context) resized(e *entry, delta int) {
	if e == nil || e.evicted {
		return
	}
	e.size += delta
	c.snap.bytes += delta
	c.enforce()
}

// enforce evicts the oldest entries past the entry and byte budgets.
func (c *Context) enforce() {
	s := &c.snap
	for {
		live := len(s.entries) - s.head
		over := c.lim.entries > 0 && live > c.lim.entries ||
			c.lim.bytes > 0 && s.bytes > c.lim.bytes && live > 1
		if !over {
			break
		}
		c.evict(s.entries[s.head])
		s.entries[s.head] = nil
		s.head++
	}
	if s.head > 64 && s.head > len(s.entries)/2 {
		n := copy(s.entries, s.entries[s.head:])
		clear(s.entries[n:])
		s.entries = s.entries[:n]
		s.head = 0
	}
}

func (c *Context) evict(e *entry) {
	s := &c.snap
	e.evicted = true
	s.bytes -= e.size
	s.truncated = true
	if s.last == e {
		s.last = nil
	}
	if e.tool != nil {
		// A call of the running turn stays known (turnTools holds it anyway) so that a later update continues
		// it; EndTurn forgets it.
		if c.tools[e.tool.id] == e.tool && (e.tool.turn == nil || e.tool.turn != c.turn) {
			delete(c.tools, e.tool.id)
		}
		e.tool.entry = nil
		return
	}
	key := msgKey{e.turn, string(e.idRaw)}
	if s.msgs[key] == e {
		delete(s.msgs, key)
	}
}

// foldState records the session-level state updates.
func (c *Context) foldState(kind string, upd []byte) {
	s := &c.snap
	switch kind {
	case "plan":
		if v := rawjson.Lookup(upd, "entries"); v != nil {
			s.plan = append(s.plan[:0:0], v...)
		}
	case "current_mode_update":
		if v := rawjson.Lookup(upd, "currentModeId"); v != nil {
			s.currentModeID = append([]byte(nil), v...)
		}
	case "config_option_update":
		if v := rawjson.Lookup(upd, "configOptions"); v != nil {
			s.configOptions = append([]byte(nil), v...)
		}
	case "available_commands_update":
		if v := rawjson.Lookup(upd, "availableCommands"); v != nil {
			s.availableCommands = append([]byte(nil), v...)
		}
	case "usage_update":
		s.usage = objectWithout(upd, "sessionUpdate", "lastTurn")
	case "session_info_update":
		_ = rawjson.EachMember(upd, func(m rawjson.Member) bool {
			k := string(m.Key(upd))
			if k == "sessionUpdate" {
				return true
			}
			v := m.Value(upd)
			for i, f := range s.sessionInfo {
				if f.key == k {
					if rawjson.IsNull(v) {
						s.sessionInfo = append(s.sessionInfo[:i], s.sessionInfo[i+1:]...)
					} else {
						s.sessionInfo[i].val = append([]byte(nil), v...)
					}
					return true
				}
			}
			if !rawjson.IsNull(v) {
				s.sessionInfo = append(s.sessionInfo, toolField{key: k, val: append([]byte(nil), v...)})
			}
			return true
		})
	}
}

// objectWithout copies obj without its top-level members named keys.
func objectWithout(obj []byte, keys ...string) []byte {
	out := []byte{'{'}
	first := true
	if rawjson.EachMember(obj, func(m rawjson.Member) bool {
		if slices.Contains(keys, string(m.Key(obj))) {
			return true
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, obj[m.KeyStart:m.ValEnd]...)
		return true
	}) != nil {
		return nil
	}
	return append(out, '}')
}

// Snapshot returns the folded state as of the log's seq (the caller passes the seq of the last frame it
// logged, under the same lock). It is FreezeSnapshot(seq).JSON().
func (c *Context) Snapshot(seq uint64) json.RawMessage { return c.FreezeSnapshot(seq).JSON() }

func appendBlock(out []byte, b block) []byte {
	if !b.isText {
		return append(out, b.raw...)
	}
	out = append(out, `{"type":"text","text":"`...)
	out = append(out, b.text...)
	return append(out, `"}`...)
}

// Title is the session title the agent last set with session_info_update ("" when none), for session lists.
func (c *Context) Title() string {
	for _, f := range c.snap.sessionInfo {
		if string(f.key) == "title" {
			var t string
			_ = json.Unmarshal(f.val, &t)
			return t
		}
	}
	return ""
}
