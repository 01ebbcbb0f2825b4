package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBoundField(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tests := []struct {
		name  string
		in    string
		shape Shape
		cut   bool
	}{
		{"fits", `{"a":"b"}`, ShapeAny, false},
		{"long string", `"` + long + `"`, ShapeAny, true},
		{"nested string", `{"stdout":"` + long + `","code":0}`, ShapeAny, true},
		{"long array", `[` + strings.Repeat(`1,`, 400) + `2]`, ShapeAny, true},
		{"content items", `[` + strings.Repeat(`{"type":"content","content":{"type":"text","text":"abc"}},`, 40) + `{"type":"terminal","terminalId":"t"}]`, ShapeContent, true},
		{"escapes not split", `"` + strings.Repeat(`\u00e9\n\"\ud83d\ude00`, 100) + `"`, ShapeAny, true},
		{"utf8 not split", `"` + strings.Repeat("é😀", 200) + `"`, ShapeAny, true},
		{"many members", `{` + strings.Repeat(`"k":1,`, 1000) + `"z":2}`, ShapeObject, true},
		{"deep", strings.Repeat("[", 5000) + strings.Repeat("]", 5000), ShapeAny, true},
		{"whitespace only", "[" + strings.Repeat(" ", 1000) + "1]", ShapeAny, false},
		{"malformed", `{"a":` + long, ShapeAny, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, cut := Bound([]byte(tt.in), 100, tt.shape)
			if cut != tt.cut {
				t.Fatalf("cut=%v: %s", cut, out)
			}
			if len(out) > hardBound(100) {
				t.Fatalf("len %d over the hard bound", len(out))
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON %s", out)
			}
			var s string
			if tt.name == "escapes not split" && json.Unmarshal(out, &s) != nil {
				t.Fatal("undecodable")
			}
			if cut && tt.shape != ShapeObject && !strings.Contains(string(out), "[gateway: truncated") {
				t.Fatalf("no marker: %s", out)
			}
		})
	}
	if out, _ := Bound([]byte(`[{"type":"content","content":{"type":"text","text":"`+long+`"}}]`), 100, ShapeContent); !strings.Contains(string(out), `"type":"content"`) || !strings.Contains(string(out), "…[gateway: truncated") {
		t.Fatalf("content shape lost: %s", out)
	}
	if out, _ := Bound([]byte("[1,2]"), 0, ShapeAny); string(out) != "[1,2]" {
		t.Fatal("0 must mean unbounded")
	}
}
