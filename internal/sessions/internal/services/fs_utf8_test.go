package services

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// TestFSDelegateParamsAreUTF8: fs/* params an agent sends with invalid UTF-8 inside a string (raw JSON keeps
// the bytes) reach a delegating editor as valid UTF-8, since they leave as a WebSocket text frame.
func TestFSDelegateParamsAreUTF8(t *testing.T) {
	for _, in := range []string{
		"{\"sessionId\":\"a\",\"path\":\"/w/x\",\"content\":\"\xff\xfe ok\"}",
		"not json \xff",
	} {
		out := ClientParams("gw-1", json.RawMessage(in))
		if !utf8.Valid(out) {
			t.Fatalf("%q: delegate params %q are not UTF-8", in, out)
		}
	}
	var m map[string]string
	if err := json.Unmarshal(ClientParams("gw-1", json.RawMessage("{\"sessionId\":\"a\",\"content\":\"\xff\"}")), &m); err != nil || m["sessionId"] != "gw-1" || m["content"] != "\uFFFD" {
		t.Fatalf("rewritten params: %v %v", m, err)
	}
}
