package rawjson

import (
	"encoding/json"
	"testing"
)

func FuzzRedact(f *testing.F) {
	for _, s := range []string{`"sk-abcdefghijklmnopqrstuv"`, `{"password":"x"}`, `"-----BEGIN RSA PRIVATE KEY-----\nx"`, `"\\\"token\\\": \\\"v\\\""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		out, _ := Redact(v)
		if json.Valid(v) && !json.Valid(out) {
			t.Fatalf("valid %s produced invalid %s", v, out)
		}
		b, _ := Bound(v, 16, ShapeAny)
		if json.Valid(v) && !json.Valid(b) {
			t.Fatalf("bound: valid %s produced invalid %s", v, b)
		}
	})
}
