package events

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Plans, usage and provider warnings.

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

type planUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []planEntry `json:"entries"`
}

// plan normalises entries: priority high|medium|low (default medium), status pending|in_progress|completed
// (default pending), empty content → "(untitled step)". Every plan carries the whole list (ACP replaces it).
func (c *Context) plan(entries []PlanEntry) []byte {
	out := make([]planEntry, 0, len(entries))
	for _, e := range entries {
		p := strings.ToLower(strings.TrimSpace(e.Priority))
		if p != "high" && p != "low" {
			p = "medium"
		}
		s := strings.ToLower(strings.TrimSpace(e.Status))
		if s != "in_progress" && s != "completed" {
			s = "pending"
		}
		content := strings.TrimSpace(e.Content)
		if content == "" {
			content = "(untitled step)"
		}
		out = append(out, planEntry{Content: cutRunes(content, maxPlanRunes), Priority: p, Status: s})
	}
	c.thoughtID = ""
	return c.params(marshal(planUpdate{SessionUpdate: "plan", Entries: out}))
}

type cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type usageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Used          uint64 `json:"used"`
	Size          uint64 `json:"size"`
	Cost          *cost  `json:"cost,omitempty"`
}

// usage returns a usage_update only when used and size are both non-negative integers. A cost is kept
// when it has a finite numeric amount and a currency; otherwise it is left out.
func (c *Context) usage(ev Event) []byte {
	used, ok1 := nonNegInt(ev.Used)
	size, ok2 := nonNegInt(ev.Size)
	if !ok1 || !ok2 {
		return nil
	}
	u := usageUpdate{SessionUpdate: "usage_update", Used: used, Size: size}
	var raw struct {
		Amount   *float64 `json:"amount"`
		Currency string   `json:"currency"`
	}
	if len(ev.Cost) > 0 && json.Unmarshal(ev.Cost, &raw) == nil && raw.Amount != nil &&
		!math.IsInf(*raw.Amount, 0) && !math.IsNaN(*raw.Amount) && raw.Currency != "" && len(raw.Currency) <= 16 {
		u.Cost = &cost{Amount: *raw.Amount, Currency: raw.Currency}
	}
	return c.params(marshal(u))
}

// nonNegInt accepts a JSON number that is a non-negative integer (1e3 included, 1.5 and -1 not).
func nonNegInt(v json.RawMessage) (uint64, bool) {
	s := string(v)
	if s == "" || s[0] == '-' || s[0] == '"' {
		return 0, false
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return 0, false
	}
	return uint64(f), true
}

type infoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Meta          any    `json:"_meta"`
}

type warningMeta struct {
	ID       string `json:"id,omitempty"`
	Message  string `json:"message"`
	Provider string `json:"provider,omitempty"`
}

// warning sends a provider warning as a session_info_update with `_meta.events.warning`, never into the
// transcript. Per turn: deduplicated by id, at most MaxWarnings sent; the rest are counted and summarised
// by EndTurn. Message and provider are bounded and redacted like a tool-call field.
func (c *Context) warning(ev Event) []byte {
	if ev.ID != "" {
		if _, dup := c.warnIDs[ev.ID]; dup {
			return nil
		}
		if len(c.warnIDs) < maxWarningIDs {
			c.warnIDs[ev.ID] = struct{}{}
		}
	}
	c.warnCount++
	if c.warnShown >= c.cfg.MaxWarnings {
		return nil
	}
	c.warnShown++
	w := c.cleanValue(marshal(warningMeta{ID: ev.ID, Message: ev.Message, Provider: ev.Provider}))
	return c.params(marshal(infoUpdate{SessionUpdate: "session_info_update", Meta: map[string]any{"events": map[string]any{"warning": w}}}))
}

// warningSummary is the one update that says how many warnings the cap held back.
func (c *Context) warningSummary() []byte {
	s := map[string]any{"warningCount": c.warnCount, "warningsShown": c.warnShown, "warningsTruncated": true}
	return c.params(marshal(infoUpdate{SessionUpdate: "session_info_update", Meta: map[string]any{"events": map[string]any{"warningSummary": s}}}))
}
