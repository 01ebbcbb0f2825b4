package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValidJSON: validJSON accepts exactly what json.Valid accepts.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi \u00e9\n"}}}}`,
		`[1,-0,0.5,1e3,1E+3,-2.5e-7,true,false,null,"",{}]`, ` {"a" : [ ] } `, `01`, `1.`, `-`, `.5`, `1e`, `"\x"`,
		`"\u12G4"`, "\"a\tb\"", `{"a":1,}`, `[1,]`, `{"a"}`, `{1:2}`, `nul`, `truex`, "\"\xff\xfe\"", ``, ` `,
		`"abc`, `{"a":1}}`, `[[[]]]`, `"\/"`, "[1]\n", `1 2`,
		"\"aaaaaaaaaaaaaaa\x01bbbbbbbbbbbbbbbb\"", `"aaaaaaaaaaaa\"bbbbbbbbbbbbbbbbb"`, `"aaaaaaaaaaa\\"`,
		"\"aaaaaaaa\xc3\xa9\xe2\x80\xa8aaaaaaaaa\x7f\"", `"aaaaaaaaaaaaaaaa\u00zz"`, `"aaaaaaa"` + `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}

// Nesting: json.Valid accepts 10 000 levels and refuses 10 001; so does validJSON.
func TestValidJSONDepth(t *testing.T) {
	for _, depth := range []int{maxNestingDepth, maxNestingDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closeWith := "]"
			if open != "[" {
				closeWith = "}"
			}
			b := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(closeWith, depth))
			if got, want := validJSON(b), json.Valid(b); got != want {
				t.Fatalf("depth %d of %s: validJSON %v, json.Valid %v", depth, open, got, want)
			}
		}
	}
}

func BenchmarkValidJSON(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("f", 480) + `"}},"_meta":{"flood":{"sentNs":1764633600000000000,"i":42}}}}`)
	for _, bc := range []struct {
		name  string
		valid func([]byte) bool
	}{{"validJSON", validJSON}, {"json.Valid", json.Valid}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for n := 0; n < b.N; n++ {
				if !bc.valid(line) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
