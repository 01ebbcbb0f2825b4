package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// sessionLog records the frames a session logs for the calls runScenario makes on its Context, stamped as
// the session stamps them: the turn's `_gateway/turn_started` after BeginTurn, updates and closers with the
// running turn's id, `_gateway/turn_ended` after EndTurn (the scenario's own note, or the one the session
// would have sent), and a `session/request_permission` frame for each permission request.
type sessionLog struct {
	t        testing.TB
	cfg      Config
	frames   [][]byte
	turn     string
	ended    string  // the turn EndTurn just closed, waiting for its turn_ended note
	endedWhy *string // its EndTurn reason
	perms    []json.RawMessage
}

func (l *sessionLog) add(method string, params []byte, m GatewayMeta, id string) {
	l.t.Helper()
	m.Seq, m.Epoch = uint64(len(l.frames)+1), "epoch-1"
	var f []byte
	var err error
	if id != "" {
		f, err = AppendRequest(nil, id, method, params, m)
	} else {
		f, err = AppendNotification(nil, method, params, m)
	}
	if err != nil {
		l.t.Fatalf("log %s: %v", method, err)
	}
	l.frames = append(l.frames, f)
}

// before is called before each step: a pending turn end without its note gets the session's note.
func (l *sessionLog) before(s step) {
	if l.ended == "" || s.Note[0] == "_gateway/turn_ended" {
		return
	}
	l.endNote()
}

func (l *sessionLog) endNote() {
	if l.ended == "" {
		return
	}
	p := map[string]any{"turnId": l.ended, "stopReason": "end_turn"}
	switch *l.endedWhy {
	case "":
	case StopCancelled:
		p["stopReason"] = StopCancelled
	default:
		p["error"] = map[string]any{"message": *l.endedWhy}
	}
	b, _ := json.Marshal(p)
	l.add("_gateway/turn_ended", b, GatewayMeta{TurnID: l.ended}, "")
	l.ended = ""
}

func (l *sessionLog) begin(id string) {
	l.turn = id
	l.add("_gateway/turn_started", []byte(`{"turnId":"`+id+`"}`), GatewayMeta{TurnID: id}, "")
}

func (l *sessionLog) update(params []byte, truncated bool) {
	l.add("session/update", params, GatewayMeta{TurnID: l.turn, Truncated: truncated}, "")
}

func (l *sessionLog) end(reason string, closers [][]byte) {
	for _, p := range closers {
		l.update(p, false)
	}
	l.ended, l.endedWhy = l.turn, &reason
	l.turn = ""
}

func (l *sessionLog) note(method, params string) {
	if method == "_gateway/turn_ended" {
		l.ended = ""
	}
	l.add(method, []byte(params), GatewayMeta{TurnID: l.turn}, "")
}

func (l *sessionLog) permission(toolCall json.RawMessage) {
	id := fmt.Sprintf("perm-%d", len(l.perms)+1)
	params := `{"sessionId":` + string(appendString(nil, l.cfg.SessionID)) + `,"toolCall":` + string(toolCall) +
		`,"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}`
	l.add("session/request_permission", []byte(params), GatewayMeta{TurnID: l.turn, PermissionID: id, Deadline: "2026-12-01T05:00:00Z"}, id)
	l.perms = append(l.perms, toolCall)
}

// checkRestored rebuilds a Context from the log and compares it with the live one: the same snapshot, the
// same replay, the same title, the permission requests as logged, and afterwards the same translation of
// what comes next (an id-less chunk continues or starts the same message; a tool call merges the same).
func (l *sessionLog) checkRestored(live *Context) {
	t := l.t
	t.Helper()
	l.endNote()
	r := NewContext(l.cfg)
	var perms []json.RawMessage
	for _, f := range l.frames {
		info, err := r.Restore(f)
		if err != nil {
			t.Fatalf("Restore(%s): %v", f, err)
		}
		if info.Permission != nil {
			perms = append(perms, info.Permission.ToolCall)
			if info.Meta.PermissionID != info.Permission.ID || info.Permission.Deadline == "" || len(info.Permission.Request.Options) != 2 {
				t.Fatalf("restored permission %+v from %s", info.Permission, f)
			}
		}
	}
	if got, want := r.Snapshot(42), live.Snapshot(42); !bytes.Equal(got, want) {
		t.Fatalf("restored snapshot differs:\n%s\nlive:\n%s", got, want)
	}
	if got, want := r.Replay(), live.Replay(); !equalFrames(got, want) {
		t.Fatalf("restored replay differs:\n%s\nlive:\n%s", bytes.Join(got, []byte("\n")), bytes.Join(want, []byte("\n")))
	}
	if r.Title() != live.Title() {
		t.Fatalf("title %q, live %q", r.Title(), live.Title())
	}
	if !equalFrames(toBytes(perms), toBytes(l.perms)) {
		t.Fatalf("permission tool calls %s, logged %s", perms, l.perms)
	}
	for _, next := range []string{
		chunk("agent_message_chunk", "after the restore"),
		chunk("agent_message_chunk", " and more"),
		`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed"}}`,
		chunk("agent_thought_chunk", "thinking"),
	} {
		gu, gerr := r.Update([]byte(next))
		wu, werr := live.Update([]byte(next))
		if (gerr == nil) != (werr == nil) || !bytes.Equal(gu.Params, wu.Params) || gu.Text != wu.Text {
			t.Fatalf("after the restore, %s translates to %s (%v), live %s (%v)", next, gu.Params, gerr, wu.Params, werr)
		}
	}
	if got, want := r.Snapshot(43), live.Snapshot(43); !bytes.Equal(got, want) {
		t.Fatalf("snapshot after more updates differs:\n%s\nlive:\n%s", got, want)
	}
}

func equalFrames(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func toBytes(rs []json.RawMessage) [][]byte {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// TestRestoreRejectsWhatIsNotLogged: frames without a method, params or stamp are errors, not silent folds.
func TestRestoreRejectsWhatIsNotLogged(t *testing.T) {
	c := NewContext(Config{SessionID: "s"})
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan"},"_meta":{"gateway":{"seq":"x"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"gateway":{"seq":1}}}}`,
		`{"jsonrpc":"2.0","method":"session/request_permission","params":{"toolCall":{"toolCallId":"a"},"options":[{"optionId":"o","name":"O","kind":"allow_once"}],"_meta":{"gateway":{"seq":1}}}}`,
		`[]`,
	} {
		if _, err := c.Restore([]byte(f)); err == nil {
			t.Errorf("Restore(%s) accepted it", f)
		}
	}
	if s := string(c.Snapshot(0)); strings.Contains(s, `"entries":[{`) {
		t.Fatalf("a rejected frame was folded: %s", s)
	}
}
