package events

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/acp-gateway/gateway/internal/translate"
)

// Config is what one session's translation needs. The zero value of each field means what its comment says.
type Config struct {
	SessionID string // the ACP session id stamped on every notification
	Cwd       string // the session's absolute working directory; "" = no tool call gets locations

	// Resolve resolves symlinks in an absolute path (the adapter passes filepath.EvalSymlinks). It is only
	// used to decide whether a location stays inside Cwd. Nil: lexical checks only.
	Resolve func(string) (string, error)

	MaxFieldBytes int  // bound on each tool-call content, rawInput, rawOutput and _meta; 0 = 64 KiB, < 0 = unbounded
	MaxChunkBytes int  // message/thought text longer than this is split into several chunks; 0 = 64 KiB
	MaxWarnings   int  // provider warnings sent per turn; 0 = 256
	KeepSecrets   bool // false: secrets in tool-call fields, titles and warnings are redacted
}

const (
	defaultFieldBytes = 64 << 10
	defaultChunkBytes = 64 << 10
	defaultWarnings   = 256

	maxStreamedBytes = 16 << 20 // answer text kept per turn for final-answer dedupe
	maxWarningIDs    = 4096     // distinct warning ids remembered per turn for dedupe
	maxNodes         = 4096     // recurse nodes and subagents remembered per session
	maxTitleRunes    = 60
	maxPlanRunes     = 2048
)

// Result is what one event (or line) produced.
type Result struct {
	// Updates are `session/update` params (`{"sessionId":…,"update":…}`) to send, in order.
	Updates [][]byte
	// Permission is set for a permission_request: the `session/request_permission` params to send, and the
	// agent's id to answer with PermissionDecision.
	Permission *PermissionAsk
	// Done is set when the event ended the running turn; StopReason is then the ACP stop reason.
	Done       bool
	StopReason string

	Malformed bool // the line was not an event
	Ignored   bool // the event was valid but produced nothing it was meant to (unknown type, stale, unmatched)
}

// Stats counts what the translation dropped, for diagnostics.
type Stats struct {
	Malformed   int // lines that were not events
	UnknownType int // events of a type this version does not know
	Unmatched   int // tool results with no open tool call, decisions for unknown ids
	Stale       int // done events for a turn that is not running
}

// Context is one session's translation state. The caller owns it and serialises every call; it has no lock,
// no goroutines, no clock and never touches the disk (locations are resolved through Config.Resolve).
type Context struct {
	cfg     Config             // Static after construction.
	cleaner *translate.Context // stateless: used only for its bound+redact of tool-call objects

	stats Stats

	// Session scope.
	nodes     map[string]*node // recurse nodes by correlation id, subagents by "subagent:"+id
	nodeOrder []string         // insertion order, for eviction
	seq       uint64           // minted ids; never reset
	realCwd   string           // Cwd with symlinks resolved; computed on first use
	cwdDone   bool

	// Turn scope (reset by BeginTurn).
	turnID          string
	turnRunning     bool
	cancelRequested bool
	answerID        string
	segment         []byte // answer text streamed since the last assistant_message
	lastFinal       string // the last assistant_message, while no answer text followed it
	lastFinalSet    bool
	turnAnswer      []byte             // all answer text sent this turn
	answerOverflow  bool               // turnAnswer passed maxStreamedBytes
	thoughtID       string             // current thought message id; "" after anything else was sent
	tools           map[string]*tool   // tool calls of this turn by id
	pending         map[string][]*tool // open tool calls per run, oldest first
	warnShown       int
	warnCount       int
	warnIDs         map[string]struct{}
	perms           map[string]*permission
}

// NewContext returns the translation state for one session.
func NewContext(cfg Config) *Context {
	if cfg.MaxFieldBytes == 0 {
		cfg.MaxFieldBytes = defaultFieldBytes
	} else if cfg.MaxFieldBytes < 0 {
		cfg.MaxFieldBytes = 0 // translate: 0 = unbounded
	}
	if cfg.MaxChunkBytes <= 0 {
		cfg.MaxChunkBytes = defaultChunkBytes
	}
	if cfg.MaxWarnings <= 0 {
		cfg.MaxWarnings = defaultWarnings
	}
	c := &Context{
		cfg:     cfg,
		cleaner: translate.NewContext(translate.Config{SessionID: cfg.SessionID, MaxFieldBytes: cfg.MaxFieldBytes, Redact: !cfg.KeepSecrets}),
		nodes:   map[string]*node{},
		perms:   map[string]*permission{},
	}
	c.resetTurn("")
	return c
}

func (c *Context) resetTurn(id string) {
	c.turnID = id
	c.cancelRequested = false
	c.answerID = ""
	c.segment = c.segment[:0]
	c.lastFinal, c.lastFinalSet = "", false
	c.turnAnswer = c.turnAnswer[:0]
	c.answerOverflow = false
	c.thoughtID = ""
	c.tools = map[string]*tool{}
	c.pending = map[string][]*tool{}
	c.warnShown, c.warnCount = 0, 0
	c.warnIDs = map[string]struct{}{}
}

// Stats returns the counters so far.
func (c *Context) Stats() Stats { return c.stats }

// TurnRunning reports whether a turn is running.
func (c *Context) TurnRunning() bool { return c.turnRunning }

// TurnID returns the running turn's id, or "".
func (c *Context) TurnID() string {
	if !c.turnRunning {
		return ""
	}
	return c.turnID
}

// BeginTurn starts a turn. Message ids, the final-answer dedupe, the warning cap, tool-call pairing and the
// cancel flag are scoped to it. A turn still running is ended first (its updates are dropped: the caller
// must EndTurn it properly instead).
func (c *Context) BeginTurn(turnID string) {
	c.resetTurn(turnID)
	c.turnRunning = true
	c.perms = map[string]*permission{}
}

// Cancel records that the client asked to cancel the running turn: it ends `cancelled` whatever terminal
// status the agent reports (even one that slipped in first), and pending permission requests are denied.
func (c *Context) Cancel() {
	if c.turnRunning {
		c.cancelRequested = true
	}
}

// CancelRequested reports whether Cancel was called in the running turn.
func (c *Context) CancelRequested() bool { return c.cancelRequested }

// EndTurn ends the running turn with the agent's terminal status (done, error, timeout, interrupted; "" when
// the agent did not say, e.g. the caller gave up waiting after a cancel). It returns the updates that close
// the turn (the warning summary when the cap was passed) and the ACP stop reason. Calling it with no turn
// running returns no updates and the stop reason the status maps to.
func (c *Context) EndTurn(status string) ([][]byte, string) {
	var out [][]byte
	if c.turnRunning && c.warnCount > c.warnShown {
		out = append(out, c.warningSummary())
	}
	reason := stopReason(status, c.turnRunning && c.cancelRequested)
	if c.turnRunning {
		c.turnRunning = false
		c.perms = map[string]*permission{}
	}
	return out, reason
}

// stopReason maps a terminal status to ACP: interrupted → cancelled; done, error, timeout, anything else →
// end_turn (a failure is content, not a protocol error); a requested cancel wins over all of them.
func stopReason(status string, cancelRequested bool) string {
	agent := translate.StopEndTurn
	if status == "interrupted" {
		agent = translate.StopCancelled
	}
	return translate.ResolveStopReason(agent, cancelRequested)
}

// ApplyLine decodes one stdout line and applies it. A line that is not an event is counted and ignored.
func (c *Context) ApplyLine(line []byte) Result {
	ev, err := DecodeEvent(line)
	if err != nil {
		c.stats.Malformed++
		return Result{Malformed: true}
	}
	return c.Apply(ev)
}

// Apply translates one event.
func (c *Context) Apply(ev Event) Result {
	switch ev.Type {
	case TypeTextDelta:
		return Result{Updates: c.answerDelta(ev.Text)}
	case TypeReasoningDelta:
		return Result{Updates: c.thought(ev.Text)}
	case TypeAssistantMessage:
		return Result{Updates: c.finalSegment(ev.Text)}
	case TypeIterationOutput:
		return c.iterationOutput(ev)
	case TypeToolCall:
		return Result{Updates: c.toolCall(ev)}
	case TypeToolResult:
		return c.toolResult(ev)
	case TypeSubagent:
		return c.subagent(ev)
	case TypeRecurse:
		return c.recurse(ev)
	case TypePlan:
		return Result{Updates: [][]byte{c.plan(ev.Entries)}}
	case TypeUsage:
		if u := c.usage(ev); u != nil {
			return Result{Updates: [][]byte{u}}
		}
		return Result{Ignored: true}
	case TypeWarning:
		if u := c.warning(ev); u != nil {
			return Result{Updates: [][]byte{u}}
		}
		return Result{}
	case TypePermissionRequest:
		return c.permissionRequest(ev)
	case TypeError:
		return Result{Updates: c.errorEvent(ev.NodeID, ev.Kind, ev.Message)}
	case TypeDone:
		return c.done(ev)
	default:
		c.stats.UnknownType++
		return Result{Ignored: true}
	}
}

func (c *Context) done(ev Event) Result {
	if !c.turnRunning || (ev.TurnID != "" && ev.TurnID != c.turnID) {
		c.stats.Stale++
		return Result{Ignored: true}
	}
	var out [][]byte
	if ev.Answer != nil {
		out = append(out, c.finalTurn(*ev.Answer)...)
	}
	if ev.Message != "" && (ev.Status == "error" || ev.Status == "timeout") {
		kind := ev.Status
		out = append(out, c.rootError(kind, ev.Message)...)
	}
	end, reason := c.EndTurn(ev.Status)
	return Result{Updates: append(out, end...), Done: true, StopReason: reason}
}

// mint returns a fresh id suffix, unique within the Context.
func (c *Context) mint() string {
	c.seq++
	return strconv.FormatUint(c.seq, 10)
}

func (c *Context) turnPrefix() string {
	if c.turnRunning && c.turnID != "" {
		return c.turnID
	}
	return "noturn"
}

// params wraps an update object as SessionNotification params.
func (c *Context) params(update []byte) []byte {
	sid := marshal(c.cfg.SessionID)
	p := make([]byte, 0, len(update)+len(sid)+24)
	p = append(p, `{"sessionId":`...)
	p = append(p, sid...)
	p = append(p, `,"update":`...)
	p = append(p, update...)
	return append(p, '}')
}

// marshal encodes v, which is always one of this package's own types; a failure is a programming error.
// HTML escaping is off so text reads as the agent wrote it (the output is JSON, not HTML).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("events: marshal: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
