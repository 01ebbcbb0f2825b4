package translate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The gateway hands UpdateFrame params borrowed from the SDK's read buffer (acp.Connection.
// HandleNotificationsInline): they are overwritten by the next line the agent writes. Whatever a Context keeps
// (messages, tool calls and their terminal output, plan, modes, usage, session info) must be copies. These
// tests run the same updates through two Contexts, one reading each update from a buffer that is scribbled
// over after the call (as the SDK's next read does), one from private copies, and require the same state.

var borrowedInputs = []string{
	chunk("agent_message_chunk", "first"),
	`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"with id"}}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}}`,
	chunk("agent_thought_chunk", "thinking \u00e9"),
	chunk("user_message_chunk", "user said"),
	`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Run ls","kind":"execute","status":"pending","rawInput":{"command":"ls"},"locations":[{"path":"/a"}],"_meta":{"terminal_info":{"terminal_id":"term-1"}}}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress","_meta":{"terminal_output":{"terminal_id":"term-1","data":"line one\n"}}}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output":{"terminal_id":"term-1","data":"line \"two\"\n"}}}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output":{"terminal_id":"term-2","data":"other terminal"}}}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"terminal","terminalId":"term-1"}],"_meta":{"terminal_exit":{"terminal_id":"term-1","exit_code":0}}}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t\u0032","status":"pending","title":"escaped id"}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"step","priority":"high","status":"pending"}]}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"current_mode_update","currentModeId":"architect"}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"config_option_update","configOptions":[{"id":"model","currentValue":"fast"}]}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"help","description":"h"}]}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":12,"size":100}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":"A title","updatedAt":"2026-01-01T00:00:00Z"}}`,
	`{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":"Another title"}}`,
	chunk("agent_message_chunk", strings.Repeat("long ", 40)),
}

// runBorrowed feeds updates to a Context through one reused buffer, scribbled after each call, and to another
// from private copies; it fails unless both give the same frames and text and end in the same state. An
// update both refuse (fuzz input) is skipped.
func runBorrowed(t *testing.T, updates [][]byte) {
	t.Helper()
	cfg := Config{SessionID: "gw", MaxFieldBytes: 64, Redact: true}
	borrowed, owned := NewContext(cfg), NewContext(cfg)
	borrowed.BeginTurn("T")
	owned.BeginTurn("T")
	m := GatewayMeta{Epoch: "e", TurnID: "T"}
	var readBuf []byte
	var seq uint64
	for _, u := range updates {
		readBuf = append(readBuf[:0], u...)
		fb, errB := borrowed.UpdateFrame(readBuf, m)
		fo, errO := owned.UpdateFrame(bytes.Clone(u), m)
		if (errB == nil) != (errO == nil) {
			t.Fatalf("%s: errors %v and %v", u, errB, errO)
		}
		if errB != nil {
			continue
		}
		seq++
		var tb, to strings.Builder
		fb.WriteText(&tb, 0)
		fo.WriteText(&to, 0)
		frB, _ := fb.Frame(seq)
		frO, _ := fo.Frame(seq)
		for i := range readBuf { // the SDK reads the agent's next line into the same bytes
			readBuf[i] = 'x'
		}
		if tb.String() != to.String() || !bytes.Equal(frB, frO) {
			t.Fatalf("%s: frame or text read the buffer after the call:\n%s %q\n%s %q", u, frB, tb.String(), frO, to.String())
		}
	}
	if b, o := borrowed.Snapshot(seq), owned.Snapshot(seq); !bytes.Equal(b, o) {
		t.Fatalf("state kept bytes of the read buffer:\nborrowed %s\nowned    %s", b, o)
	}
	for _, id := range []string{"t1", "t2"} {
		req := json.RawMessage(`{"toolCallId":"` + id + `"}`)
		if b, o := borrowed.PermissionToolCall(req), owned.PermissionToolCall(req); !bytes.Equal(b, o) {
			t.Fatalf("tool call %s kept bytes of the read buffer:\nborrowed %s\nowned    %s", id, b, o)
		}
	}
}

func TestUpdateFrameKeepsNoBorrowedBytes(t *testing.T) {
	var updates [][]byte
	for _, s := range borrowedInputs {
		updates = append(updates, []byte(s))
	}
	runBorrowed(t, updates)
}

// FuzzUpdateFrameBorrowed splits its input into updates at newlines.
func FuzzUpdateFrameBorrowed(f *testing.F) {
	f.Add([]byte(strings.Join(borrowedInputs, "\n")))
	for _, s := range frameInputs {
		f.Add([]byte(s + "\n" + s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		runBorrowed(t, bytes.Split(in, []byte("\n")))
	})
}
