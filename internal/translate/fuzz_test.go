package translate

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// FuzzUpdate: never panics; valid JSON in, valid JSON out, for the forwarded params and for everything the
// Context produces afterwards (snapshot, replay, closers, permission merge).
func FuzzUpdate(f *testing.F) {
	for _, s := range []string{
		chunk("agent_message_chunk", "hi"),
		`{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","messageId":null,"content":{"type":"text","text":"\u00e9\"x"}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"sk-abcdefghijklmnopqrstu","rawInput":{"password":"x","a":[1,2,3,"-----BEGIN PRIVATE KEY-----\nAAA"]},"content":[{"type":"content","content":{"type":"text","text":"token=abc Bearer abcdefghijk"}}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","_meta":{"a":1},"locations":null}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":null}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"x","priority":"high","status":"pending"}]}}`,
		`{"update":{"sessionUpdate":"brand_new","x":[[[[{}]]]]}}`,
		badChunk,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","_meta":{"terminal_output":{"terminal_id":"c","data":"\u001b[31m\ud83d\ude00 \u00e9\"x\\ é long enough to be cut when it is accumulated twice\r\n"}}}}`,
		"{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"c\",\"_meta\":{\"terminal_output\":{\"data\":\"\xff\xfe\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\"}}}}",
		"{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"c\xff\",\"title\":\"\xfe\xed\xa0\x80\"}}",
	} {
		f.Add([]byte(s), uint8(40))
	}
	f.Fuzz(func(t *testing.T, params []byte, limit uint8) {
		c := NewContext(Config{SessionID: "gw", MaxFieldBytes: int(limit), Redact: true, SnapshotMaxMessageBytes: 64, SnapshotMaxEntries: 4})
		c.BeginTurn("T")
		u, err := c.Update(params)
		if err == nil && json.Valid(params) && !json.Valid(u.Params) {
			t.Fatalf("valid %s produced invalid %s", params, u.Params)
		}
		if err == nil && !utf8.Valid(u.Params) {
			t.Fatalf("%q produced invalid UTF-8 %q", params, u.Params)
		}
		_, _ = c.Update(params) // a second time merges into the state the first created
		if !json.Valid(params) {
			return
		}
		for _, p := range c.EndTurn("cancelled") {
			if !json.Valid(p) {
				t.Fatalf("closer %s", p)
			}
		}
		if s := c.Snapshot(1); !json.Valid(s) || !utf8.Valid(s) {
			t.Fatalf("snapshot %s from %s", s, params)
		}
		for _, p := range c.Replay() {
			if !json.Valid(p) {
				t.Fatalf("replay %s from %s", p, params)
			}
		}
		if upd := rawjson.Lookup(params, "update"); upd != nil {
			if tc := c.PermissionToolCall(upd); !json.Valid(tc) {
				t.Fatalf("permission tool call %s", tc)
			}
		}
	})
}

// FuzzRestore: a stored frame is input too (a store can hand back anything): Restore never panics and the
// Context it folds into still produces valid JSON.
func FuzzRestore(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"T-m1"},"_meta":{"gateway":{"seq":2,"epoch":"e","turnId":"T"}}}}`,
		`{"jsonrpc":"2.0","method":"_gateway/turn_started","params":{"turnId":"T","_meta":{"gateway":{"seq":1}}}}`,
		`{"jsonrpc":"2.0","method":"_gateway/turn_ended","params":{"turnId":"T","stopReason":"cancelled","_meta":{"gateway":{"seq":3}}}}`,
		`{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"toolCall":{"toolCallId":"c"},"options":[{"optionId":"o","name":"O","kind":"allow_once"}],"_meta":{"gateway":{"seq":4,"permissionId":"p1","deadline":"2026-01-01T00:00:00Z"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"c","content":null},"_meta":{"gateway":{"seq":5}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan"},"_meta":{"gateway":{"seq":"x"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		c := NewContext(Config{SessionID: "gw", SnapshotMaxMessageBytes: 64, SnapshotMaxEntries: 4})
		_, _ = c.Restore(frame)
		_, _ = c.Restore(frame)
		if s := c.Snapshot(1); !json.Valid(s) {
			t.Fatalf("snapshot %s from %s", s, frame)
		}
		for _, p := range c.Replay() {
			if !json.Valid(p) {
				t.Fatalf("replay %s from %s", p, frame)
			}
		}
	})
}
