package rawjson

import (
	"encoding/json"
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
		got, changed := Redact([]byte(tt.in))
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
