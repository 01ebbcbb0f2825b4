package translate

import (
	"encoding/json"
	"strings"
	"testing"
)

// The stamp reader agrees with json.Unmarshal into the stamp's fields, errors included.
func TestGatewayMetaParseAsUnmarshal(t *testing.T) {
	for _, raw := range []string{
		`{"seq":12,"epoch":"e1","turnId":"t1"}`,
		`{"seq":13,"epoch":"e1","turnId":"t1","permissionId":"p1","deadline":"2026-01-02T03:04:05Z","truncated":true,"resent":false}`,
		`{"seq":1,"epoch":"e\u0031\n","unknown":{"a":[1,2,{"b":null}]},"turnId":null}`,
		`{"SEQ":7,"Epoch":"e2","TURNID":"t2"}`,
		`{"seq":3,"seq":4,"epoch":"a","epoch":"b"}`,
		` { "seq" : 5 , "truncated" : null } `,
		`{"seq":"5"}`, `{"seq":-1}`, `{"seq":1.5}`, `{"seq":1e2}`, `{"seq":18446744073709551616}`,
		`{"seq":2,"epoch":3}`, `{"seq":2,"truncated":"yes"}`, `{"seq":2,"resent":1}`,
		`{"epoch":"e1"}`, `{"seq":0}`, `{}`, `[]`, `"x"`,
		"{\"seq\":1,\"epoch\":\"\xff\"}", "{\"seq\":1,\"turnId\":\"a\xed\xa0\x80b\"}", "{\"seq\":1,\"epoch\":\"\\u00e9\xff\"}",
		`{"seq":1,"s\u0065q":2}`, `{"\u0073eq":2}`, `{"seq":1,"\u0065poch":"e"}`, `{"seq":1,"ſeq":3}`,
	} {
		var got GatewayMeta
		gotErr := got.parse([]byte(raw))
		var want struct {
			Seq          uint64 `json:"seq"`
			Epoch        string `json:"epoch"`
			TurnID       string `json:"turnId"`
			PermissionID string `json:"permissionId"`
			Deadline     string `json:"deadline"`
			Truncated    bool   `json:"truncated"`
			Resent       bool   `json:"resent"`
		}
		wantErr := json.Unmarshal([]byte(raw), &want)
		if wantErr == nil && want.Seq == 0 {
			wantErr = json.Unmarshal([]byte(`0`), new(struct{})) // no seq: an error too
		}
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, json.Unmarshal's %v", raw, gotErr, wantErr)
			continue
		}
		if gotErr == nil && got != GatewayMeta(want) {
			t.Errorf("%s: %+v, json.Unmarshal read %+v", raw, got, want)
		}
	}
}

// A follower restores every frame the owner logs: a flood chunk's stamp is read without encoding/json's
// reflection, which took 5 of Restore's allocations.
func TestRestoreChunkAllocs(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"content":{"text":"` +
		strings.Repeat("x", 256) + `","type":"text"},"sessionUpdate":"agent_message_chunk","messageId":"t1-m1"},` +
		`"_meta":{"gateway":{"seq":2,"epoch":"e1","turnId":"t1"}}}}`)
	c := NewContext(Config{})
	c.BeginTurn("t1")
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := c.Restore(frame); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 6 {
		t.Fatalf("Restore of a chunk: %.0f allocations, want at most 6 (11 with encoding/json)", allocs)
	}
}
