package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// usagePrompt is a prompt for the test agent's usage mode: the turn reports usage (its tokens) and the
// session's cumulative cost.
func usagePrompt(t *testing.T, usage string, cost float64) []byte {
	t.Helper()
	step, _ := json.Marshal(map[string]any{"usage": json.RawMessage(usage), "cost": map[string]any{"amount": cost, "currency": "USD"}})
	body, _ := json.Marshal(map[string]string{"text": string(step)})
	return body
}

// turnUsageJSON is the usage a turn result, a lastTurn and the snapshot's usage.lastTurn carry.
type turnUsageJSON struct {
	TurnID            string `json:"turnId"`
	InputTokens       int64  `json:"inputTokens"`
	OutputTokens      int64  `json:"outputTokens"`
	TotalTokens       int64  `json:"totalTokens"`
	ThoughtTokens     *int64 `json:"thoughtTokens"`
	CachedReadTokens  *int64 `json:"cachedReadTokens"`
	CachedWriteTokens *int64 `json:"cachedWriteTokens"`
}

// TestTurnUsageInResultsAndMetrics runs two turns for each of two principals on two agents (real test agent
// processes that report token usage and a cumulative cost): each REST turn result carries its turn's usage,
// the session view its last turn's usage next to the context meter, and /metrics (for an admin only) the
// sums per principal and agent, the cost counted by what it grew.
func TestTurnUsageInResultsAndMetrics(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "testagent-usage")
	if err := os.Symlink(testAgentBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	g, _ := startWithUsers(t, "--agent", "ta="+bin+" -mode usage", "--agent", "tb="+bin+" -mode usage", "--default-agent", "ta")

	create := func(who, agent string) string {
		st, _, body := g.request("POST", "/v1/sessions", []byte(`{"agent":"`+agent+`"}`), as(who))
		var s sessionJSON
		if st != 201 || json.Unmarshal([]byte(body), &s) != nil {
			t.Fatalf("%s creates a session of %s: %d %s", who, agent, st, body)
		}
		return s.ID
	}
	prompt := func(who, sid, usage string, cost float64) turnUsageJSON {
		t.Helper()
		st, _, body := g.request("POST", "/v1/sessions/"+sid+"/prompt?wait=true", usagePrompt(t, usage, cost), as(who))
		var res struct {
			TurnID     string         `json:"turnId"`
			StopReason string         `json:"stopReason"`
			Usage      *turnUsageJSON `json:"usage"`
		}
		if st != 200 || json.Unmarshal([]byte(body), &res) != nil || res.StopReason != "end_turn" {
			t.Fatalf("%s prompts: %d %s", who, st, body)
		}
		if res.Usage == nil {
			t.Fatalf("the turn result has no usage: %s", body)
		}
		res.Usage.TurnID = res.TurnID
		return *res.Usage
	}

	ann := create("ann", "ta")
	bob := create("bob", "tb")
	u := prompt("ann", ann, `{"inputTokens":100,"outputTokens":20,"totalTokens":130,"thoughtTokens":3,"cachedReadTokens":5,"cachedWriteTokens":7}`, 0.25)
	if u.InputTokens != 100 || u.OutputTokens != 20 || u.TotalTokens != 130 || u.ThoughtTokens == nil || *u.ThoughtTokens != 3 ||
		u.CachedReadTokens == nil || *u.CachedReadTokens != 5 || u.CachedWriteTokens == nil || *u.CachedWriteTokens != 7 {
		t.Fatalf("first turn's usage: %+v", u)
	}
	last := prompt("ann", ann, `{"inputTokens":200,"outputTokens":30,"totalTokens":230}`, 0.75)
	if last.InputTokens != 200 || last.ThoughtTokens != nil {
		t.Fatalf("second turn's usage: %+v", last)
	}
	prompt("bob", bob, `{"inputTokens":1000,"outputTokens":1,"totalTokens":1001}`, 1.5)
	prompt("bob", bob, `{"inputTokens":1,"outputTokens":1,"totalTokens":2}`, 2)

	// GET …/turn says the same as the prompt's answer.
	st, _, body := g.request("GET", "/v1/sessions/"+ann+"/turn", nil, as("ann"))
	if st != 200 || !strings.Contains(body, `"usage":{"inputTokens":200,"outputTokens":30,"totalTokens":230}`) {
		t.Fatalf("GET turn: %d %s", st, body)
	}

	// The session view: the snapshot's usage holds the context meter and the last turn's tokens, lastTurn
	// its tokens too.
	st, _, body = g.request("GET", "/v1/sessions/"+ann, nil, as("ann"))
	var view struct {
		LastTurn struct {
			TurnID string         `json:"turnId"`
			Usage  *turnUsageJSON `json:"usage"`
		} `json:"lastTurn"`
		Snapshot struct {
			Usage struct {
				Used     int64 `json:"used"`
				Size     int64 `json:"size"`
				Cost     struct{ Amount float64 }
				LastTurn *turnUsageJSON `json:"lastTurn"`
			} `json:"usage"`
		} `json:"snapshot"`
	}
	if st != 200 || json.Unmarshal([]byte(body), &view) != nil {
		t.Fatalf("GET session: %d %s", st, body)
	}
	su := view.Snapshot.Usage
	if su.Used != 1000 || su.Size != 200000 || su.Cost.Amount != 0.75 || su.LastTurn == nil || *su.LastTurn != last {
		t.Fatalf("snapshot usage: %s", body)
	}
	if lt := view.LastTurn; lt.TurnID != last.TurnID || lt.Usage == nil || lt.Usage.TotalTokens != 230 {
		t.Fatalf("lastTurn: %s", body)
	}

	// /metrics names principals and what they spent: an admin's to read.
	if st, code, _ := g.request("GET", "/metrics", nil, as("ann")); st != 403 || code != "forbidden" {
		t.Fatalf("a user reads /metrics: %d %q", st, code)
	}
	st, _, body = g.request("GET", "/metrics", nil, as("root"))
	if st != 200 {
		t.Fatalf("an admin reads /metrics: %d", st)
	}
	for _, want := range []string{
		`gateway_usage_tokens_total{agent="ta",kind="input",principal="ann"} 300`,
		`gateway_usage_tokens_total{agent="ta",kind="output",principal="ann"} 50`,
		`gateway_usage_tokens_total{agent="ta",kind="thought",principal="ann"} 3`,
		`gateway_usage_tokens_total{agent="ta",kind="cached_read",principal="ann"} 5`,
		`gateway_usage_tokens_total{agent="ta",kind="cached_write",principal="ann"} 7`,
		`gateway_usage_total_tokens_total{agent="ta",principal="ann"} 360`,
		`gateway_usage_cost_total{agent="ta",currency="USD",principal="ann"} 0.75`,
		`gateway_usage_tokens_total{agent="tb",kind="input",principal="bob"} 1001`,
		`gateway_usage_total_tokens_total{agent="tb",principal="bob"} 1003`,
		`gateway_usage_cost_total{agent="tb",currency="USD",principal="bob"} 2`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, `agent="tb",kind="input",principal="ann"`) || strings.Contains(body, `agent="ta",kind="input",principal="bob"`) {
		t.Errorf("usage counted for the wrong principal or agent:\n%s", grepLines(body, "gateway_usage_"))
	}
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
