package translate

// Config is what a session's translation needs to know. The zero value of each limit means what its comment
// says.
type Config struct {
	SessionID     string // the gateway's session id; replaces the agent's in every frame
	Cwd           string // the session's absolute working directory
	MaxFieldBytes int    // bound on tool-call content, rawInput, rawOutput and _meta; 0 = unbounded
	Redact        bool   // redact secrets in tool-call fields and titles (never in message text)

	// Snapshot bounds (see snapshot.go). Zero means the documented default; negative means unbounded.
	SnapshotMaxEntries      int // entries kept, oldest evicted first; default 2000
	SnapshotMaxBytes        int // bytes of content kept over all entries, oldest evicted first; default 8 MiB
	SnapshotMaxMessageBytes int // bytes kept per message and per tool-call field; default 256 KiB
}

// Context is one session's translation state. It is owned by the session, which serialises every call
// (holds its lock); Context itself has no lock, no goroutines and no clock.
type Context struct {
	cfg Config     // Static after construction.
	lim snapLimits // Static after construction.

	turn      *turnRec    // the running turn, nil between turns
	turnTools []*toolCall // tool calls created in the running turn, in order; closed by EndTurn
	stream    stream      // the message the last chunk belonged to (message-id policy)
	idSeq     uint64      // minted message ids; never reset, so ids never repeat within a Context

	turns turnIndex            // turn records by id, bounded
	tools map[string]*toolCall // latest tool call per toolCallId, for merges and permission requests
	snap  snapshot
	// restoring is set while Restore folds a logged frame: its fields are already clean and no output is built.
	restoring bool
}

// NewContext returns the translation state for one session.
func NewContext(cfg Config) *Context {
	c := &Context{cfg: cfg, lim: resolveLimits(cfg), tools: map[string]*toolCall{}}
	c.turns.init()
	c.snap.init()
	return c
}

// BeginTurn starts a new turn: message ids minted from now on are scoped to it, and tool calls created from
// now on are the ones EndTurn closes. A turn still running is ended as if EndTurn("") had been called.
func (c *Context) BeginTurn(turnID string) {
	if c.turn != nil {
		c.EndTurn("")
	}
	c.turn = c.turns.get(turnID)
	c.turn.outcome = turnRunning
	c.stream = stream{}
}

// EndTurn closes the turn. When reason is not empty (cancelled, agent died), it returns a terminal
// `tool_call_update` params object (status failed, `update._meta.gateway.reason`) for every tool call of the
// turn still open, and folds them. The closer's reason lives in the update's own `_meta` because the
// params-level `_meta.gateway` belongs to the log's stamp (AppendNotification replaces it).
//
// With an empty reason the agent ended the turn itself, and open tool calls stay as the agent left them
// (the SDK example agent leaves a rejected call `pending`: that is its statement, not ours to rewrite).
func (c *Context) EndTurn(reason string) [][]byte {
	var out [][]byte
	if reason != "" {
		for _, tc := range c.turnTools {
			if tc.terminal() {
				continue
			}
			p := c.closer(tc, reason)
			out = append(out, p)
		}
	}
	if t := c.turn; t != nil && t.outcome == turnRunning {
		switch reason {
		case "":
			t.outcome = turnDone
		case StopCancelled:
			t.outcome = turnCancelled
		default:
			t.outcome = turnFailed
		}
	}
	c.turn = nil
	for _, tc := range c.turnTools {
		if tc.entry == nil && c.tools[tc.id] == tc { // evicted: no entry to continue after the turn
			delete(c.tools, tc.id)
		}
	}
	clear(c.turnTools)
	c.turnTools = c.turnTools[:0]
	c.stream = stream{}
	return out
}

// Update is one agent `session/update` translated for clients.
type Update struct {
	Params    []byte // the notification params to log and send, sessionId rewritten
	Kind      string // update.sessionUpdate
	Text      string // for agent_message_chunk with text content: the text
	Truncated bool   // a field was cut to the payload bound
}
