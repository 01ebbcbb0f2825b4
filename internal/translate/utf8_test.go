package translate

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// badChunk is an agent_message_chunk whose text holds raw FF FE bytes (not escapes), as a broken agent writes it.
const badChunk = "{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"a\xff\xfeb\"}}}"

func TestValidUTF8(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"é"}`, `{"a":"é"}`},
		{"{\"a\":\"\xff\xfe\"}", "{\"a\":\"\uFFFD\"}"},
		{"{\"a\":\"x\xc3\"}", "{\"a\":\"x\uFFFD\"}"},       // truncated two-byte sequence
		{"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\uFFFD\"}"}, // an encoded surrogate is not UTF-8
		{"{\"\xff\":1}", "{\"\uFFFD\":1}"},                 // keys too
	} {
		got := ValidUTF8([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("ValidUTF8(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !utf8.Valid(got) || !json.Valid(got) {
			t.Errorf("ValidUTF8(%q) = %q: not valid UTF-8 JSON", tc.in, got)
		}
	}
	ok := []byte(`{"jsonrpc":"2.0","params":{"text":"héllo"}}`)
	if n := testing.AllocsPerRun(100, func() { _ = ValidUTF8(ok) }); n != 0 {
		t.Errorf("valid input allocated %v times", n)
	}
	if got := ValidUTF8(ok); &got[0] != &ok[0] {
		t.Error("valid input was copied")
	}
}

// TestUpdateFrameReplacesInvalidUTF8: raw invalid bytes inside a JSON string of an agent update never reach
// the log's frame, the forwarded params or the snapshot.
func TestUpdateFrameReplacesInvalidUTF8(t *testing.T) {
	c := NewContext(Config{SessionID: "gw"})
	c.BeginTurn("T")
	u, err := c.UpdateFrame([]byte(badChunk), GatewayMeta{Epoch: "e", TurnID: "T"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := u.Frame(1)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(f) || !json.Valid(f) {
		t.Fatalf("frame is not valid UTF-8 JSON: %q", f)
	}
	var got struct {
		Params struct {
			Update struct {
				Content struct{ Text string } `json:"content"`
			} `json:"update"`
		} `json:"params"`
	}
	if err := json.Unmarshal(f, &got); err != nil || got.Params.Update.Content.Text != "a\uFFFDb" {
		t.Fatalf("text %q (%v), want a\uFFFDb", got.Params.Update.Content.Text, err)
	}
	if s := c.Snapshot(1); !utf8.Valid(s) {
		t.Fatalf("snapshot is not valid UTF-8: %q", s)
	}
}

// TestFramesReplaceInvalidUTF8: every other frame builder (gateway notifications with raw members, permission
// requests, prompts) yields valid UTF-8.
func TestFramesReplaceInvalidUTF8(t *testing.T) {
	bad := []byte("{\"line\":\"\xff\xfe\"}")
	n, err := AppendNotification(nil, "_gateway/agent_output", bad, GatewayMeta{Seq: 1})
	if err != nil || !utf8.Valid(n) {
		t.Errorf("notification %q (%v)", n, err)
	}
	c := NewContext(Config{SessionID: "gw"})
	perm := []byte("{\"sessionId\":\"a\",\"toolCall\":{\"toolCallId\":\"t\",\"title\":\"rm \xff\"},\"options\":[{\"optionId\":\"o\",\"name\":\"\xfe\",\"kind\":\"allow_once\"}]}")
	req, err := ParsePermissionRequest(perm)
	if err != nil || !utf8.Valid(req.ToolCall) || !utf8.Valid([]byte(req.Options[0].Name)) {
		t.Errorf("parsed request %+v (%v)", req, err)
	}
	if tc := c.PermissionToolCall(req.ToolCall); !utf8.Valid(tc) {
		t.Errorf("permission tool call %q", tc)
	}
	p, err := c.PermissionParams(perm)
	if err != nil {
		t.Fatal(err)
	}
	r, err := AppendRequest(nil, "p1", "session/request_permission", p, GatewayMeta{Seq: 2})
	if err != nil || !utf8.Valid(r) || !json.Valid(r) {
		t.Errorf("request %q (%v)", r, err)
	}
	for _, u := range c.UserPrompt("T", []json.RawMessage{json.RawMessage("{\"type\":\"text\",\"text\":\"\xff\xfe\"}")}) {
		if !utf8.Valid(u) || !json.Valid(u) {
			t.Errorf("prompt chunk %q", u)
		}
	}
	if s := c.Snapshot(3); !utf8.Valid(s) {
		t.Errorf("snapshot %q", s)
	}
}

func TestEchoID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"abc"`, `"abc"`},
		{"\"a\xff\"", "\"a\uFFFD\""},
		{`"\ud800"`, "\"\uFFFD\""}, // a lone surrogate escape decodes to U+FFFD
		{`12`, `12`},
		{` -1.5e3 `, `-1.5e3`},
		{`null`, `null`},
		{`{"a":1}`, `null`},
		{`[1]`, `null`},
		{`true`, `null`},
		{``, `null`},
		{`"unterminated`, `null`},
	} {
		if got := EchoID(json.RawMessage(tc.in)); string(got) != tc.want {
			t.Errorf("EchoID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzValidUTF8: the output is always valid UTF-8, equal to the input when that was valid, and valid JSON
// when the input was.
func FuzzValidUTF8(f *testing.F) {
	for _, s := range []string{badChunk, `{"a":"é"}`, "\xff", "{\"a\":\"\xc3\"}", "\"\xed\xa0\x80\"", "[\"\xf4\x90\x80\x80\"]", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := ValidUTF8(in)
		if !utf8.Valid(out) {
			t.Fatalf("ValidUTF8(%q) = %q", in, out)
		}
		if utf8.Valid(in) && string(out) != string(in) {
			t.Fatalf("valid %q changed to %q", in, out)
		}
		if json.Valid(in) && !json.Valid(out) {
			t.Fatalf("valid JSON %q became %q", in, out)
		}
		if id := EchoID(in); !utf8.Valid(id) || !json.Valid(id) {
			t.Fatalf("EchoID(%q) = %q", in, id)
		}
	})
}
