package rawjson

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
