package translate

import (
	"encoding/json"
	"testing"
)

// TestSnapshotUsageHoldsLastTurnTokens: the snapshot's usage object carries the context meter of the last
// usage_update and, as lastTurn, the token usage `_gateway/turn_ended` logged for the last turn; a later
// usage_update keeps lastTurn, a turn that reported none clears it, and a restored Context folds the same.
func TestSnapshotUsageHoldsLastTurnTokens(t *testing.T) {
	usageOf := func(c *Context) string {
		var s struct {
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal(c.Snapshot(1), &s); err != nil {
			t.Fatal(err)
		}
		return string(s.Usage)
	}
	c := NewContext(Config{SessionID: "gw"})
	if got := usageOf(c); got != "" {
		t.Fatalf("usage before any: %s", got)
	}
	c.BeginTurn("t1")
	c.Note("_gateway/turn_started", []byte(`{"turnId":"t1"}`))
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"usage_update","used":10,"size":100,"cost":{"amount":0.5,"currency":"USD"},"lastTurn":"forged"}}`)
	c.EndTurn("")
	c.Note("_gateway/turn_ended", []byte(`{"turnId":"t1","stopReason":"end_turn","usage":{"inputTokens":7,"outputTokens":2,"totalTokens":9}}`))
	want := `{"used":10,"size":100,"cost":{"amount":0.5,"currency":"USD"},"lastTurn":{"turnId":"t1","inputTokens":7,"outputTokens":2,"totalTokens":9}}`
	if got := usageOf(c); got != want {
		t.Fatalf("after the turn\n got  %s\n want %s", got, want)
	}
	mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"usage_update","used":20,"size":100}}`)
	want = `{"used":20,"size":100,"lastTurn":{"turnId":"t1","inputTokens":7,"outputTokens":2,"totalTokens":9}}`
	if got := usageOf(c); got != want {
		t.Fatalf("after a usage_update outside a turn\n got  %s\n want %s", got, want)
	}

	// Token usage without any usage_update still makes a usage object.
	d := NewContext(Config{SessionID: "gw"})
	d.BeginTurn("t2")
	d.Note("_gateway/turn_ended", []byte(`{"turnId":"t2","stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2,"thoughtTokens":null}}`))
	if got, want := usageOf(d), `{"lastTurn":{"turnId":"t2","inputTokens":1,"outputTokens":1,"totalTokens":2,"thoughtTokens":null}}`; got != want {
		t.Fatalf("tokens alone\n got  %s\n want %s", got, want)
	}
	d.BeginTurn("t3")
	d.Note("_gateway/turn_ended", []byte(`{"turnId":"t3","stopReason":"cancelled"}`))
	if got := usageOf(d); got != "" {
		t.Fatalf("a turn without usage left the last one's: %s", got)
	}
	d.BeginTurn("t4")
	d.Note("_gateway/turn_ended", []byte(`{"turnId":"t4","stopReason":"end_turn","usage":"not an object"}`))
	if got := usageOf(d); got != "" {
		t.Fatalf("a malformed usage reached the snapshot: %s", got)
	}
}
