package translate

import (
	"encoding/json"
	"testing"
)

func TestAppendNotificationStampsMeta(t *testing.T) {
	tests := []struct {
		name, params, want string
	}{
		{"no meta", `{"sessionId":"s","update":{"sessionUpdate":"x","a":null}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"x","a":null},"_meta":{"gateway":{"seq":7,"epoch":"e","turnId":"t"}}}}`},
		{"agent meta kept in place", `{"_meta":{"agent":{"k":1}} , "sessionId":"s"}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"agent":{"k":1},"gateway":{"seq":7,"epoch":"e","turnId":"t"}},"sessionId":"s"}}`},
		{"agent gateway key replaced", `{"_meta":{"gateway":"spoof","z":2}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"z":2,"gateway":{"seq":7,"epoch":"e","turnId":"t"}}}}`},
		{"empty", `{}`, `{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"gateway":{"seq":7,"epoch":"e","turnId":"t"}}}}`},
		{"null meta", `{"_meta":null}`, `{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"gateway":{"seq":7,"epoch":"e","turnId":"t"}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendNotification(nil, "session/update", []byte(tt.params), GatewayMeta{Seq: 7, Epoch: "e", TurnID: "t"})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Fatal("invalid JSON")
			}
		})
	}
}

func TestAppendNotificationRejectsNonObjects(t *testing.T) {
	for _, p := range []string{``, `[]`, `"x"`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a":"unterminated}`} {
		if _, err := AppendNotification(nil, "m", []byte(p), GatewayMeta{}); err == nil {
			t.Errorf("%q: want error", p)
		}
	}
}

func TestRewriteSessionID(t *testing.T) {
	got, err := RewriteSessionID(nil, []byte(`{"sessionId":"agent-1","update":{"sessionId":"inner"}}`), "gw")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"sessionId":"gw","update":{"sessionId":"inner"}}`; string(got) != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func FuzzAppendNotification(f *testing.F) {
	for _, s := range []string{`{}`, `{"_meta":{"a":1}}`, `{"a":[1,{"b":"\"}"}]}`, `{"sessionId":"x","_meta":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		got, err := AppendNotification(nil, "session/update", params, GatewayMeta{Seq: 1, Epoch: "e"})
		if err != nil {
			return
		}
		if json.Valid(params) && !json.Valid(got) {
			t.Fatalf("valid params %q produced invalid frame %q", params, got)
		}
	})
}
