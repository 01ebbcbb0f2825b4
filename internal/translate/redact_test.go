package translate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// Redaction runs after truncation; a secret the cut would split is dropped whole, so no prefix of it leaks
// (a short prefix would be too short to recognise).
func TestSecretStraddlingTheCut(t *testing.T) {
	for _, secret := range []string{"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"} {
		for shift := 1; shift < len(secret); shift += 3 {
			c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 300, Redact: true})
			// {"stdout": is 10 bytes, so the string body is cut at 288 bytes; put the cut shift bytes into the secret.
			prefix := strings.Repeat("ab ", 96)[:288-shift]
			out, _ := json.Marshal(map[string]string{"stdout": prefix + secret + " tail " + strings.Repeat("z", 400)})
			u := mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","rawOutput":`+string(out)+`}}`)
			if !u.Truncated {
				t.Fatal("not truncated")
			}
			got := string(field(t, u.Params, "update", "rawOutput"))
			if strings.Contains(got, secret[:min(len(secret), 4)]) && !strings.Contains(got, "[REDACTED]") {
				t.Errorf("shift %d: secret prefix leaked: %s", shift, got)
			}
			if strings.Contains(got, secret[len(secret)/2:]) {
				t.Errorf("shift %d: secret leaked: %s", shift, got)
			}
		}
	}
}

func TestRedactOnlyToolCallsNeverMessageText(t *testing.T) {
	c := NewContext(Config{SessionID: "gw", Redact: true})
	for _, k := range []string{"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"} {
		u := mustUpdate(t, c, chunk(k, "sk-abcdefghijklmnopqrstuvwx"))
		if !strings.Contains(string(u.Params), "sk-abcdefghijklmnopqrstuvwx") {
			t.Errorf("%s text redacted: %s", k, u.Params)
		}
	}
	u := mustUpdate(t, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"sk-abcdefghijklmnopqrstuvwx","title":"sk-abcdefghijklmnopqrstuvwx","status":"pending","locations":[{"path":"/home/u/token=abc"}]}}`)
	if str(t, u.Params, "update", "toolCallId") != "sk-abcdefghijklmnopqrstuvwx" {
		t.Errorf("toolCallId must never be rewritten: %s", u.Params)
	}
	if str(t, u.Params, "update", "title") != "sk-[REDACTED]" || strings.Contains(string(field(t, u.Params, "update", "locations")), "abc") {
		t.Errorf("title/locations not redacted: %s", u.Params)
	}
	c2 := NewContext(Config{SessionID: "gw"})
	u = mustUpdate(t, c2, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"sk-abcdefghijklmnopqrstuvwx"}}`)
	if !strings.Contains(string(u.Params), "sk-abcdefghijklmnopqrstuvwx") {
		t.Error("redacted although Config.Redact is false")
	}
}

// hostile500KB is tool output built to hurt a backtracking matcher: near-miss prefixes, unterminated PEM
// headers, key-value separators without values, long token runs, escapes.
func hostile500KB() []byte {
	parts := []string{"sk-", "sk-abc ", "ghp_", "AKIA", "Bearer ", "bearer x ", "-----BEGIN ", "-----BEGIN PRIVATE KEY", "password", "token=", "api_key:", "\\\"secret\\\": ", "\\u0041", "aaaaaaaaaaaaaaaaaaaaaaaa", "=", ":", " "}
	var b strings.Builder
	b.WriteString(`{"stdout":"`)
	for i := 0; b.Len() < 500<<10; i++ {
		b.WriteString(parts[(i*7)%len(parts)])
	}
	b.WriteString(`"}`)
	return []byte(b.String())
}

func TestHostileInputStaysValid(t *testing.T) {
	in := hostile500KB()
	if !json.Valid(in) {
		t.Fatal("bad fixture")
	}
	out, _ := rawjson.Redact(in)
	if !json.Valid(out) {
		t.Fatal("redaction broke JSON")
	}
	b, cut := rawjson.Bound(in, 64<<10, rawjson.ShapeAny)
	if !cut || len(b) > 2*(64<<10)+1024 || !json.Valid(b) { // past Bound's hard bound (2·max + 1 KiB)
		t.Fatalf("bound: cut=%v len=%d", cut, len(b))
	}
}
