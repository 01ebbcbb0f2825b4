package events

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
)

// Tool calls.
//
// tool_call → `tool_call` (status in_progress): title from the name and a structured argument, kind from the
// name, locations only from a structured `path` argument inside the session cwd, rawInput = args.
// tool_result → `tool_call_update` completed, or failed when ok is false, an error is present or the exit
// code is nonzero (a failed tool is content, never a protocol error). A failed result's first content
// line is "<kind>: <message>".
//
// Pairing (rlmx): a result with an id updates that call; a result without an id takes the oldest open call
// of its run (runId, "" = the root run), FIFO; a result that matches no open call is skipped and counted,
// never turned into a fabricated tool call. Tool-call state is scoped to the turn: ids are only unique per
// turn (agents reuse t1 every turn).

type tool struct {
	id   string
	run  string
	done bool
}

type toolContent struct {
	Type    string    `json:"type"`
	Content textBlock `json:"content"`
}

type location struct {
	Path string `json:"path"`
	Line *int64 `json:"line,omitempty"`
}

// toolUpdate is a `tool_call` or `tool_call_update` object.
type toolUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title,omitempty"`
	Kind          string          `json:"kind,omitempty"`
	Status        string          `json:"status,omitempty"`
	Content       []toolContent   `json:"content,omitempty"`
	Locations     []location      `json:"locations,omitempty"`
	RawInput      json.RawMessage `json:"rawInput,omitempty"`
	RawOutput     json.RawMessage `json:"rawOutput,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

func text(s string) toolContent { return toolContent{Type: "content", Content: textBlock{"text", s}} }

// emitTool bounds and redacts a tool update through translate's cleaner and wraps it as params.
func (c *Context) emitTool(u toolUpdate) []byte {
	c.thoughtID = ""
	return c.params(c.clean(marshal(u)))
}

// clean bounds and redacts one tool-call object. It reuses translate.Context.PermissionToolCall, whose
// contract for a tool call the Context has never seen is exactly that: each field bounded to MaxFieldBytes
// with a self-describing marker, then redacted, ids and enums untouched, member order kept.
func (c *Context) clean(obj []byte) []byte { return c.cleaner.PermissionToolCall(obj) }

// cleanValue bounds and redacts any JSON value as a tool call's rawOutput would be.
func (c *Context) cleanValue(v []byte) json.RawMessage {
	obj := append(append([]byte(`{"toolCallId":"","rawOutput":`), v...), '}')
	var out struct {
		RawOutput json.RawMessage `json:"rawOutput"`
	}
	if json.Unmarshal(c.clean(obj), &out) != nil || out.RawOutput == nil {
		return json.RawMessage(`null`)
	}
	return out.RawOutput
}

func (c *Context) toolCall(ev Event) [][]byte {
	id := ev.ID
	if id == "" {
		id = "tool-" + c.mint()
	}
	u := toolUpdate{
		SessionUpdate: "tool_call",
		ToolCallID:    id,
		Title:         toolTitle(ev.Name, ev.Args),
		Kind:          ToolKind(ev.Name),
		Status:        "in_progress",
		Locations:     c.locations(ev.Args),
		RawInput:      rawOrNil(ev.Args),
	}
	if t := c.tools[id]; t != nil && !t.done {
		u.SessionUpdate = "tool_call_update" // announced again while open: refresh, not a second call
		return [][]byte{c.emitTool(u)}
	}
	t := &tool{id: id, run: ev.RunID}
	c.tools[id] = t
	c.pending[t.run] = append(c.pending[t.run], t)
	return [][]byte{c.emitTool(u)}
}

func (c *Context) toolResult(ev Event) Result {
	var t *tool
	if ev.ID != "" {
		t = c.tools[ev.ID]
	} else {
		for _, p := range c.pending[ev.RunID] {
			if !p.done {
				t = p
				break
			}
		}
	}
	if t == nil || t.done {
		c.stats.Unmatched++
		return Result{Ignored: true}
	}
	t.done = true
	q := c.pending[t.run]
	for len(q) > 0 && q[0].done {
		q = q[1:]
	}
	c.pending[t.run] = q

	failed := (ev.OK != nil && !*ev.OK) || ev.Error != nil || (ev.ExitCode != nil && *ev.ExitCode != 0)
	u := toolUpdate{SessionUpdate: "tool_call_update", ToolCallID: t.id, Status: "completed"}
	if failed {
		u.Status = "failed"
		switch {
		case ev.Error != nil:
			u.Content = append(u.Content, text(errorText(ev.Error.Kind, ev.Error.Message)))
		case ev.ExitCode != nil && *ev.ExitCode != 0:
			u.Content = append(u.Content, text("exit: exit code "+strconv.FormatInt(*ev.ExitCode, 10)))
		default:
			u.Content = append(u.Content, text("error: tool failed"))
		}
	}
	if s := outputText(ev.Output); s != "" {
		u.Content = append(u.Content, text(s))
	}
	raw := map[string]any{"ok": !failed}
	if ev.Output != nil {
		raw["output"] = ev.Output
	}
	if ev.Error != nil {
		raw["error"] = ev.Error
	}
	if ev.ExitCode != nil {
		raw["exitCode"] = *ev.ExitCode
	}
	if ev.DurationMs != nil {
		raw["durationMs"] = *ev.DurationMs
	}
	u.RawOutput = marshal(raw)
	return Result{Updates: [][]byte{c.emitTool(u)}}
}

// outputText renders a tool output for humans: a string as is, null as nothing, anything else as JSON.
func outputText(v json.RawMessage) string {
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	var s string
	if v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

func rawOrNil(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	return v
}

// toolArgs are the structured arguments titles and locations are taken from.
type toolArgs struct {
	Path    *string         `json:"path"`
	Command json.RawMessage `json:"command"`
	Line    *int64          `json:"line"`
}

func parseArgs(args json.RawMessage) toolArgs {
	var a toolArgs
	if len(args) > 0 && args[0] == '{' {
		_ = json.Unmarshal(args, &a) // a wrongly typed member just leaves that member unset
	}
	return a
}

// toolTitle is "<name> <path>", "<name>: <command>" cut to 60 characters with "...", else "<name>"; never
// empty ("tool" when the name is).
func toolTitle(name string, args json.RawMessage) string {
	name = oneLine(cutRunes(name, 4*maxTitleRunes))
	if name == "" {
		name = "tool"
	}
	a := parseArgs(args)
	if a.Path != nil && *a.Path != "" {
		return cutRunes(name+" "+oneLine(cutRunes(*a.Path, 4*maxTitleRunes)), 4*maxTitleRunes)
	}
	if cmd := commandString(a.Command); cmd != "" {
		return cutRunes(name+": "+oneLine(cutRunes(cmd, 8*maxTitleRunes)), maxTitleRunes)
	}
	return name
}

// commandString accepts a command as a string or an argv array of strings.
func commandString(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(v, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return ""
}

// ToolKind is the ACP tool kind for a tool name (cosmetic: it drives an icon). The name is split into
// lower-case words (at `_`, `-`, `.`, `/`, spaces and camelCase humps); the first word with a known kind
// decides, so `read_file` is read, `web_search` fetch, `apply_patch` edit, `bash` execute.
func ToolKind(name string) string {
	for _, w := range words(name) {
		if k, ok := kindWords[w]; ok {
			return k
		}
	}
	return "other"
}

var kindWords = map[string]string{
	"read": "read", "cat": "read", "view": "read", "open": "read", "load": "read", "get": "read", "head": "read", "tail": "read",
	"write": "edit", "edit": "edit", "patch": "edit", "apply": "edit", "create": "edit", "replace": "edit", "insert": "edit",
	"update": "edit", "modify": "edit", "append": "edit", "str": "edit", "multiedit": "edit", "save": "edit",
	"bash": "execute", "shell": "execute", "sh": "execute", "exec": "execute", "execute": "execute", "run": "execute",
	"command": "execute", "terminal": "execute", "cmd": "execute", "spawn": "execute", "eval": "execute", "repl": "execute",
	"search": "search", "grep": "search", "find": "search", "glob": "search", "list": "search", "ls": "search",
	"query": "search", "lookup": "search", "rg": "search",
	"fetch": "fetch", "http": "fetch", "https": "fetch", "web": "fetch", "curl": "fetch", "wget": "fetch",
	"download": "fetch", "url": "fetch", "browse": "fetch", "browser": "fetch", "request": "fetch",
	"think": "think", "reason": "think", "reflect": "think", "plan": "think", "todo": "think",
	"delete": "delete", "remove": "delete", "rm": "delete", "unlink": "delete", "del": "delete", "rmdir": "delete",
	"move": "move", "rename": "move", "mv": "move",
}

func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			if prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = false
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			cur = append(cur, r)
			prevLower = true
		default:
			flush()
			prevLower = false
		}
		if len(out) > 8 {
			break
		}
	}
	flush()
	return out
}

// locations returns the location of a structured `path` argument when it stays inside the session cwd,
// else nothing. Locations are never inferred from prose.
func (c *Context) locations(args json.RawMessage) []location {
	a := parseArgs(args)
	if a.Path == nil || *a.Path == "" || c.cfg.Cwd == "" {
		return nil
	}
	p, ok := c.inside(*a.Path)
	if !ok {
		return nil
	}
	loc := location{Path: p}
	if a.Line != nil && *a.Line >= 0 {
		loc.Line = a.Line
	}
	return []location{loc}
}

// inside resolves p against the cwd and reports the cleaned absolute path when it stays inside it:
// lexically (no `..` escape, no sibling prefix such as /work-other for /work) and, with a resolver, after
// symlinks on both sides are resolved. A path that does not exist yet (a file about to be written) is
// checked through its nearest existing ancestor.
func (c *Context) inside(p string) (string, bool) {
	if strings.ContainsRune(p, 0) {
		return "", false
	}
	cwd := filepath.Clean(c.cfg.Cwd)
	if !filepath.IsAbs(cwd) {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	if !within(p, cwd) {
		return "", false
	}
	if c.cfg.Resolve == nil {
		return p, true
	}
	real, ok := c.resolve(p)
	if !ok || !within(real, c.resolvedCwd(cwd)) {
		return "", false
	}
	return p, true
}

func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

func (c *Context) resolvedCwd(cwd string) string {
	if !c.cwdDone {
		c.cwdDone = true
		c.realCwd = cwd
		if r, err := c.cfg.Resolve(cwd); err == nil && filepath.IsAbs(r) {
			c.realCwd = filepath.Clean(r)
		}
	}
	return c.realCwd
}

// resolve resolves p, or its nearest resolvable ancestor with the rest appended.
func (c *Context) resolve(p string) (string, bool) {
	rest := ""
	for i := 0; i < 256; i++ {
		if r, err := c.cfg.Resolve(p); err == nil {
			if !filepath.IsAbs(r) {
				return "", false
			}
			return filepath.Join(r, rest), true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", false
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
	return "", false
}
