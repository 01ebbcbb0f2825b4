package ws

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeClientMessage(t *testing.T) {
	tests := []struct {
		name, in string
		wantID   string
		wantCode int // 0 = no reply
		outcome  string
	}{
		{"selected", `{"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"selected","optionId":"a"}}}`, "p1", 0, "selected"},
		{"cancelled", `{"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"cancelled"}}}`, "p1", 0, "cancelled"},
		{"error response denies", `{"jsonrpc":"2.0","id":"p1","error":{"code":-32000,"message":"no"}}`, "p1", 0, "cancelled"},
		{"malformed", `{"jsonrpc":`, "", codeParseError, ""},
		{"not an object", `[1,2]`, "", codeParseError, ""},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`, "", codeMethodNotFound, ""},
		{"notification ignored", `{"jsonrpc":"2.0","method":"x"}`, "", 0, ""},
		{"no id no method", `{"jsonrpc":"2.0"}`, "", codeInvalidRequest, ""},
		{"numeric id", `{"jsonrpc":"2.0","id":7,"result":{}}`, "", codeUnknownRequest, ""},
		{"bad result", `{"jsonrpc":"2.0","id":"p1","result":{"outcome":"yes"}}`, "", codeInvalidParams, ""},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"m"}`, "", codeMethodNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa, reply := decodeClientMessage([]byte(tt.in))
			if tt.wantID != "" {
				if pa == nil || pa.id != tt.wantID || pa.answer.Outcome.Outcome != tt.outcome {
					t.Fatalf("got %+v %s", pa, reply)
				}
				return
			}
			if pa != nil {
				t.Fatalf("unexpected answer %+v", pa)
			}
			if tt.wantCode == 0 {
				if reply != nil {
					t.Fatalf("unexpected reply %s", reply)
				}
				return
			}
			var r struct {
				ID    json.RawMessage    `json:"id"`
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal(reply, &r); err != nil || r.Error.Code != tt.wantCode {
				t.Fatalf("reply %s, want code %d", reply, tt.wantCode)
			}
			if r.ID[0] == '{' || r.ID[0] == '[' {
				t.Fatalf("reply %s echoes the client's raw id", reply)
			}
		})
	}
}

// FuzzDecodeClientMessage: any frame yields either an answer or a valid JSON-RPC reply (or nothing), never a
// panic.
func FuzzDecodeClientMessage(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":"p","result":{"outcome":{"outcome":"selected","optionId":"a"}}}`, `{`, `null`, `{"id":null}`, `{"method":"m","id":[1]}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\xfe\",\"result\":{}}", "{\"id\":{\"k\":\"\xff\"},\"method\":\"m\"}", `{"id":"\ud800","result":7}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pa, reply := decodeClientMessage(data)
		if pa != nil && reply != nil {
			t.Fatal("both an answer and a reply")
		}
		if reply != nil && (!json.Valid(reply) || !utf8.Valid(reply)) {
			t.Fatalf("invalid reply %q", reply)
		}
		var r struct{ ID json.RawMessage }
		if reply != nil && json.Unmarshal(reply, &r) == nil && len(r.ID) > 0 && strings.IndexByte(`"-0123456789n`, r.ID[0]) < 0 {
			t.Fatalf("reply %q echoes an id that is not a string, a number or null", reply)
		}
	})
}
