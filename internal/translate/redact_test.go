package translate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"sk-abcdefghijklmnopqrstuvwx"`, `"sk-[REDACTED]"`},
		{`"sk-ant-api03-abcdefghijklmnop"`, `"sk-[REDACTED]"`},
		{`"task-abcdefghijklmnopqrstuvwxyz"`, `"task-abcdefghijklmnopqrstuvwxyz"`}, // not at a word start
		{`"sk-short"`, `"sk-short"`},
		{`"x ghp_abcdefghijklmnopqrstuvwxyz0123456789 y"`, `"x ghp_[REDACTED] y"`},
		{`"github_pat_11ABCDEFG0123456789_abcdefghijkl"`, `"github_pat_[REDACTED]"`},
		{`"xoxb-1234567890-abcdef xoxp-1234567890-x"`, `"xoxb-[REDACTED] xoxp-[REDACTED]"`},
		{`"AKIAIOSFODNN7EXAMPLE"`, `"AKIA[REDACTED]"`},
		{`"AKIAiosfodnn7example"`, `"AKIAiosfodnn7example"`},
		{`"AKIAIOSFODNN7EXAMPLEX"`, `"AKIAIOSFODNN7EXAMPLEX"`},
		{`"glpat-abcdefghijklmnopqrstu"`, `"glpat-[REDACTED]"`},
		{`"AIzaSyA-abcdefghijklmnopqrstuvwxyz01234"`, `"AIza[REDACTED]"`},
		{`"Authorization: Bearer eyJhbGciOi.JIUzI1.NiJ9"`, `"Authorization: Bearer [REDACTED]"`},
		{`"bearer abc"`, `"bearer abc"`},
		{`"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----"`, `"-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----"`},
		{`"-----BEGIN CERTIFICATE-----\nMIIE\n-----END CERTIFICATE-----"`, `"-----BEGIN CERTIFICATE-----\nMIIE\n-----END CERTIFICATE-----"`},
		{`"-----BEGIN EC PRIVATE KEY-----\nMIIE…[gateway: truncated 9 bytes]"`, `"-----BEGIN EC PRIVATE KEY-----[REDACTED]…[gateway: truncated 9 bytes]"`},
		{`"password=hunter2&user=bob"`, `"password=[REDACTED]&user=bob"`},
		{`"export GITHUB_TOKEN=abc123 next"`, `"export GITHUB_TOKEN=[REDACTED] next"`},
		{`"api_key: 'zzz'"`, `"api_key: '[REDACTED]'"`},
		{`"{\"client_secret\": \"s3cr3t\"}"`, `"{\"client_secret\": \"[REDACTED]\"}"`},
		{`"line\npassword=x"`, `"line\npassword=[REDACTED]"`},
		{`{"password":"hunter2 with spaces","n":1}`, `{"password":"[REDACTED]","n":1}`},
		{`{"sessionToken" : "abc"}`, `{"sessionToken" : "[REDACTED]"}`},
		{`{"token":123,"max_tokens":"5"}`, `{"token":123,"max_tokens":"5"}`},
		{`{"password":null}`, `{"password":null}`},
		{`["tokenizer: fine", "secret_santa: fine"]`, `["tokenizer: fine", "secret_santa: fine"]`},
		{`"plain text, nothing here"`, `"plain text, nothing here"`},
	}
	for _, tt := range tests {
		got, changed := redactJSON([]byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("redact(%s)\n got  %s\n want %s", tt.in, got, tt.want)
		}
		if changed != (tt.in != tt.want) {
			t.Errorf("redact(%s): changed=%v", tt.in, changed)
		}
		if !json.Valid(got) {
			t.Errorf("redact(%s) = invalid JSON %s", tt.in, got)
		}
	}
}

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
	out, _ := redactJSON(in)
	if !json.Valid(out) {
		t.Fatal("redaction broke JSON")
	}
	b, cut := boundField(in, 64<<10, shapeAny)
	if !cut || len(b) > hardBound(64<<10) || !json.Valid(b) {
		t.Fatalf("bound: cut=%v len=%d", cut, len(b))
	}
}
