package events

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Nodes: recursive child runs (rlmx) and subagents (Pixir), both session-scoped tool-call items.
//
// A recurse event opens one tool call per correlation id, `recurse-<correlationId>`, titled
// "<name> [d<depth>] <prompt preview>" (name defaults to "recurse"), whose content starts with the line
// "↳ depth D · parent P" and whose `_meta.events.node` carries {correlationId, parentRunId, depth}. An
// iteration_output whose correlationId names an open node is that child's completion: a tool_call_update
// completed with the output, a metrics line and `_meta.events.node` = {correlationId, parentRunId, depth,
// latencyMs, costUsd, tokens}. Nodes are keyed by correlation id, never by depth. Any other
// iteration_output is the root loop's intermediate text: a thought.
//
// A subagent is ONE tool call, `subagent-<id>`, stable across turns: the first event for an id creates it
// (`tool_call`), every later one (this turn or a later one) only updates it. Its exact status is kept in
// `rawOutput._meta.status`; the ACP status collapses to in_progress, completed or failed (see
// SubagentStatus).
//
// An error event whose nodeId names a recurse node, a tool call of the turn or a subagent fails that item;
// any other error (root, unknown node) is a message chunk with its own messageId, not answer text.

type node struct {
	toolCallID  string
	correlation string
	parentRun   string
	depth       int
	subagent    bool
}

type nodeMeta struct {
	CorrelationID string          `json:"correlationId"`
	ParentRunID   string          `json:"parentRunId"`
	Depth         int             `json:"depth"`
	LatencyMs     *float64        `json:"latencyMs,omitempty"`
	CostUsd       *float64        `json:"costUsd,omitempty"`
	Tokens        json.RawMessage `json:"tokens,omitempty"`
}

func nodeMetaJSON(m nodeMeta) json.RawMessage {
	return marshal(map[string]any{"events": map[string]any{"node": m}})
}

func (c *Context) remember(key string, n *node) {
	if _, ok := c.nodes[key]; !ok {
		c.nodeOrder = append(c.nodeOrder, key)
	}
	c.nodes[key] = n
	for len(c.nodeOrder) > maxNodes {
		delete(c.nodes, c.nodeOrder[0])
		c.nodeOrder = c.nodeOrder[1:]
	}
}

func edgeLine(depth int, parent string) string {
	if parent == "" {
		parent = "root"
	}
	return "↳ depth " + strconv.Itoa(depth) + " · parent " + parent
}

func (c *Context) recurse(ev Event) Result {
	if ev.CorrelationID == "" {
		c.stats.Unmatched++
		return Result{Ignored: true}
	}
	depth := 1
	if ev.Depth != nil && *ev.Depth >= 0 {
		depth = *ev.Depth
	}
	name := oneLine(cutRunes(ev.Name, 4*maxTitleRunes))
	if name == "" {
		name = "recurse"
	}
	title := name + " [d" + strconv.Itoa(depth) + "]"
	if p := oneLine(cutRunes(ev.Prompt, 8*maxTitleRunes)); p != "" {
		title = cutRunes(title+" "+p, maxTitleRunes)
	}
	n := &node{toolCallID: "recurse-" + ev.CorrelationID, correlation: ev.CorrelationID, parentRun: ev.ParentRunID, depth: depth}
	_, known := c.nodes[ev.CorrelationID]
	c.remember(ev.CorrelationID, n)
	u := toolUpdate{
		SessionUpdate: "tool_call",
		ToolCallID:    n.toolCallID,
		Title:         title,
		Kind:          "other",
		Status:        "in_progress",
		Content:       []toolContent{text(edgeLine(depth, ev.ParentRunID))},
		Meta:          nodeMetaJSON(nodeMeta{CorrelationID: n.correlation, ParentRunID: n.parentRun, Depth: depth}),
	}
	if ev.Prompt != "" {
		u.Content = append(u.Content, text(ev.Prompt))
		u.RawInput = marshal(map[string]string{"prompt": ev.Prompt})
	}
	if known {
		u.SessionUpdate = "tool_call_update"
	}
	return Result{Updates: [][]byte{c.emitTool(u)}}
}

func (c *Context) iterationOutput(ev Event) Result {
	out := ev.Text
	if out == "" {
		out = outputText(ev.Output)
	}
	n := c.nodes[ev.CorrelationID]
	if ev.CorrelationID == "" || n == nil || n.subagent {
		return Result{Updates: c.thought(out)}
	}
	meta := nodeMeta{CorrelationID: n.correlation, ParentRunID: n.parentRun, Depth: n.depth}
	content := []toolContent{text(edgeLine(n.depth, n.parentRun))}
	if out != "" {
		content = append(content, text(out))
	}
	if m := ev.Metrics; m != nil {
		meta.LatencyMs, meta.CostUsd, meta.Tokens = m.LatencyMs, m.CostUsd, validTokens(m.Tokens)
		if line := metricsLine(meta); line != "" {
			content = append(content, text(line))
		}
	}
	u := toolUpdate{
		SessionUpdate: "tool_call_update",
		ToolCallID:    n.toolCallID,
		Status:        "completed",
		Content:       content,
		Meta:          nodeMetaJSON(meta),
	}
	if out != "" {
		u.RawOutput = marshal(map[string]string{"output": out})
	}
	return Result{Updates: [][]byte{c.emitTool(u)}}
}

// validTokens keeps a token count that is a number or an object, and drops anything else.
func validTokens(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return nil
	}
	if v[0] == '{' || v[0] == '-' || v[0] >= '0' && v[0] <= '9' {
		return v
	}
	return nil
}

func metricsLine(m nodeMeta) string {
	var parts []string
	if m.LatencyMs != nil {
		parts = append(parts, "latency "+strconv.FormatFloat(*m.LatencyMs, 'f', -1, 64)+" ms")
	}
	if m.CostUsd != nil {
		parts = append(parts, "cost $"+strconv.FormatFloat(*m.CostUsd, 'f', -1, 64))
	}
	if len(m.Tokens) > 0 {
		parts = append(parts, "tokens "+string(m.Tokens))
	}
	return strings.Join(parts, " · ")
}

// SubagentStatus collapses a subagent's status to an ACP tool-call status. Unknown statuses count as still
// running; detached (the parent stopped waiting, the subagent lives on elsewhere) completes the item from
// the parent's point of view.
func SubagentStatus(s string) string {
	switch strings.ToLower(s) {
	case "completed", "complete", "done", "succeeded", "success", "finished", "detached":
		return "completed"
	case "failed", "failure", "error", "errored", "timed_out", "timeout", "cancelled", "canceled",
		"killed", "crashed", "aborted", "interrupted":
		return "failed"
	default:
		return "in_progress"
	}
}

func (c *Context) subagent(ev Event) Result {
	if ev.ID == "" {
		c.stats.Unmatched++
		return Result{Ignored: true}
	}
	key := "subagent:" + ev.ID
	n := c.nodes[key]
	create := n == nil
	if create {
		n = &node{toolCallID: "subagent-" + ev.ID, subagent: true}
		c.remember(key, n)
	}
	status := ev.Status
	if status == "" {
		status = "running"
	}
	u := toolUpdate{SessionUpdate: "tool_call_update", ToolCallID: n.toolCallID, Status: SubagentStatus(status)}
	if create {
		name := oneLine(cutRunes(ev.Name, 4*maxTitleRunes))
		if name == "" {
			name = ev.ID
		}
		u.SessionUpdate = "tool_call"
		u.Title = cutRunes("subagent "+name, 4*maxTitleRunes)
		u.Kind = "other"
		u.RawInput = marshal(map[string]string{"id": ev.ID, "name": ev.Name})
	}
	if ev.Summary != "" {
		u.Content = []toolContent{text(ev.Summary)}
	}
	raw := map[string]any{"_meta": map[string]string{"status": status, "subagentId": ev.ID, "name": ev.Name}}
	if ev.Summary != "" {
		raw["summary"] = ev.Summary
	}
	u.RawOutput = marshal(raw)
	return Result{Updates: [][]byte{c.emitTool(u)}}
}

func (c *Context) errorEvent(nodeID, kind, message string) [][]byte {
	if nodeID != "" {
		id := ""
		if n := c.nodes[nodeID]; n != nil {
			id = n.toolCallID
		} else if n := c.nodes["subagent:"+nodeID]; n != nil {
			id = n.toolCallID
		} else if t := c.tools[nodeID]; t != nil {
			id = t.id
			t.done = true
		}
		if id != "" {
			u := toolUpdate{
				SessionUpdate: "tool_call_update",
				ToolCallID:    id,
				Status:        "failed",
				Content:       []toolContent{text(errorText(kind, message))},
				RawOutput:     marshal(errorRaw(kind, message)),
			}
			return [][]byte{c.emitTool(u)}
		}
	}
	return c.rootError(kind, message)
}

func errorRaw(kind, message string) map[string]string {
	m := map[string]string{"error": message}
	if kind != "" {
		m["kind"] = kind
	}
	return m
}
