package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

var validJSONCases = []string{
	``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `-1.5e10`,
	`true`, `false`, `null`, `tru`, `nul`, `nullx`, `truefalse`, ` {"a" : [1, 2.5, "x", null, true, {}]} `,
	`{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `[1 2]`, `{"a":1}}`, `[[]`, `"\u00e9\n\t\"\\\/\b\f\r"`,
	`"\u00g0"`, `"\u12"`, `"\x"`, "\"a\x01\"", "\"\xff\xfe\"", `"unterminated`, "\"tab\tinside\"", "{\"a\":1}\x00",
	"\t[\r\n1\n]\r\n", `{"a":{"b":{"c":[[[{"d":"e"}]]]}}}`, `[1]x`, `{"a":1}{"b":2}`, "\u00a0{}", `"\ud800"`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

// Valid says what json.Valid says.
func TestValidJSONAsEncodingJSON(t *testing.T) {
	for _, c := range validJSONCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("%.60q: %v, json.Valid %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range validJSONCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("%q: %v, json.Valid %v", b, got, want)
		}
	})
}
