package rawjson

import "encoding/json"

// Secret redaction for tool-call fields and titles (never message text: what the agent says is the
// conversation, and the user reads it anyway). It runs after truncation, on the raw JSON of one field.
//
// The scanner is hand-written and does one forward pass: every byte is looked at a bounded number of times,
// so a hostile 500 KB tool output costs linear time (translate's BenchmarkRedact500KB). It is string-aware,
// so it only ever rewrites the inside of JSON strings and the output stays valid JSON. It recognises:
//
//   - token prefixes at the start of a word: sk-… (OpenAI, Anthropic), ghp_/gho_/ghu_/ghs_/ghr_/github_pat_…
//     (GitHub), xoxb-/xoxp-/xoxa-/xoxr-/xoxs-… (Slack), glpat-… (GitLab), AKIA/ASIA + 16 (AWS), AIza + 35
//     (Google); the prefix is kept so a reader knows what kind of secret it was;
//   - `Bearer <token>`;
//   - PEM private keys: `-----BEGIN … PRIVATE KEY-----` through the matching END line, or to the truncation
//     marker or the end of the string when a cut removed it;
//   - values of keys ending in password, passwd, secret, token, api_key, apikey, api-key, access_key,
//     private_key: as a JSON member (`"password":"…"`, the whole string value) and in text
//     (`password=…`, `TOKEN: …`, `\"api_key\": \"…\"`, up to the next space, quote or separator).
//
// A word is a run of [A-Za-z0-9_-]; patterns only start at a word boundary, so `task-sk-…` is left alone.

const redacted = "[REDACTED]"

// Redact returns v with secrets inside its strings replaced, and whether anything was. v itself is
// returned (no copy) when nothing matched.
func Redact(v []byte) ([]byte, bool) {
	r := redactor{src: v}
	r.scan()
	if r.out == nil {
		return v, false
	}
	r.out = append(r.out, v[r.copied:]...)
	return r.out, true
}

type redactor struct {
	src    []byte
	out    []byte // nil until the first redaction
	copied int    // src[:copied] has been written to out
}

// replace records that src[from:to] is a secret.
func (r *redactor) replace(from, to int) {
	if to <= from {
		return
	}
	if r.out == nil {
		r.out = make([]byte, 0, len(r.src))
	}
	r.out = append(r.out, r.src[r.copied:from]...)
	r.out = append(r.out, redacted...)
	r.copied = to
}

func (r *redactor) scan() {
	src := r.src
	i := 0
	for i < len(src) {
		if src[i] != '"' {
			i++
			continue
		}
		end := r.scanString(i + 1)
		if end < 0 {
			return
		}
		// A string followed by ':' is a member key: a sensitive key's string value is a secret as a whole.
		j := skipSpace(src, end)
		if j < len(src) && src[j] == ':' && sensitiveKey(src[i+1:end-1]) {
			k := skipSpace(src, j+1)
			if k < len(src) && src[k] == '"' {
				vend, err := skipString(src, k)
				if err != nil {
					return
				}
				r.replace(k+1, vend-1)
				i = vend
				continue
			}
		}
		i = end
	}
}

// scanString scans the string whose body starts at i and returns the offset after its closing quote, or -1
// when it is unterminated.
func (r *redactor) scanString(i int) int {
	src := r.src
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			i += EscapeLen(src, i)
		case isWordByte(c):
			i = r.word(i)
		default:
			i++
		}
	}
	return -1
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// word handles the word starting at src[i] (preceded by a non-word byte, an escape or the string start)
// and returns the offset to continue from. Everything it looks at beyond the word itself is consumed or
// bounded by a constant, which keeps the scan linear.
func (r *redactor) word(i int) int {
	src := r.src
	end := i
	for end < len(src) && isWordByte(src[end]) {
		end++
	}
	w := src[i:end]
	if p := tokenPrefix(w); p > 0 {
		r.replace(i+p, end)
		return end
	}
	if equalFold(w, "bearer") {
		return r.bearer(end)
	}
	if string(w) == "-----BEGIN" {
		return r.pem(end)
	}
	if sensitiveKey(w) {
		return r.keyValue(end)
	}
	return end
}

// tokenPrefix returns the length of the recognisable prefix of a token-shaped secret (what is kept), or 0.
func tokenPrefix(w []byte) int {
	type pat struct {
		prefix   string
		minRest  int
		exactLen int // total length, 0 = any
		upper    bool
	}
	pats := [...]pat{
		{"sk-", 16, 0, false},
		{"ghp_", 20, 0, false}, {"gho_", 20, 0, false}, {"ghu_", 20, 0, false}, {"ghs_", 20, 0, false}, {"ghr_", 20, 0, false},
		{"github_pat_", 20, 0, false},
		{"xoxb-", 10, 0, false}, {"xoxp-", 10, 0, false}, {"xoxa-", 10, 0, false}, {"xoxr-", 10, 0, false}, {"xoxs-", 10, 0, false},
		{"glpat-", 20, 0, false},
		{"AKIA", 16, 20, true}, {"ASIA", 16, 20, true},
		{"AIza", 35, 39, false},
	}
	for _, p := range pats {
		if len(w) < len(p.prefix)+p.minRest || string(w[:len(p.prefix)]) != p.prefix {
			continue
		}
		if p.exactLen != 0 && len(w) != p.exactLen {
			continue
		}
		if p.upper && !allUpperAlnum(w[len(p.prefix):]) {
			continue
		}
		return len(p.prefix)
	}
	return 0
}

func allUpperAlnum(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// bearer redacts the token after `Bearer` (at src[i], after the word): spaces, then at least 8 token bytes.
func (r *redactor) bearer(i int) int {
	src := r.src
	j := i
	for j < len(src) && src[j] == ' ' {
		j++
	}
	if j == i {
		return i
	}
	k := j
	for k < len(src) && (isRunByte(src[k]) || src[k] == '~') {
		k++
	}
	if k-j < 8 {
		return i
	}
	r.replace(j, k)
	return k
}

// pemHeaderScan bounds the look for `PRIVATE KEY-----` after `-----BEGIN`.
const pemHeaderScan = 64

// pem redacts a PEM private key body. src[i] follows `-----BEGIN`.
func (r *redactor) pem(i int) int {
	src := r.src
	limit := min(len(src), i+pemHeaderScan)
	hdr := -1
	for j := i; j+len("PRIVATE KEY-----") <= limit; j++ {
		if src[j] == '"' || src[j] == '\\' {
			break
		}
		if string(src[j:j+len("PRIVATE KEY-----")]) == "PRIVATE KEY-----" {
			hdr = j + len("PRIVATE KEY-----")
			break
		}
	}
	if hdr < 0 {
		return i
	}
	// The body runs to `-----END` or, when a cut removed it, to the end of the string.
	j := hdr
	for j < len(src) {
		switch c := src[j]; {
		case c == '"':
			r.replace(hdr, j)
			return j
		case c == '\\':
			j += EscapeLen(src, j)
		case c == '-' && j+8 <= len(src) && string(src[j:j+8]) == "-----END":
			r.replace(hdr, j)
			return j + 8
		case c == cutMarkerPrefix[0] && len(src)-j >= len(cutMarkerPrefix) && string(src[j:j+len(cutMarkerPrefix)]) == cutMarkerPrefix:
			r.replace(hdr, j) // a truncation cut the key: keep the marker that says so
			return j
		default:
			j++
		}
	}
	r.replace(hdr, len(src))
	return len(src)
}

// keyValue redacts the value after a sensitive word in text: optional `\"` (the word was a quoted key in
// embedded JSON), optional spaces, `=` or `:`, optional spaces, optional `\"` or `'`, then the value up to
// the next space, quote, backslash or separator.
func (r *redactor) keyValue(i int) int {
	src := r.src
	j := i
	if j+1 < len(src) && src[j] == '\\' && src[j+1] == '"' {
		j += 2
	}
	for j < len(src) && src[j] == ' ' {
		j++
	}
	if j >= len(src) || (src[j] != '=' && src[j] != ':') {
		return i
	}
	j++
	for j < len(src) && src[j] == ' ' {
		j++
	}
	if j+1 < len(src) && src[j] == '\\' && src[j+1] == '"' {
		j += 2
	} else if j < len(src) && src[j] == '\'' {
		j++
	}
	k := j
	for k < len(src) {
		c := src[k]
		if c == ' ' || c == '"' || c == '\\' || c == '\'' || c == '&' || c == ',' || c == ';' || c == '}' || c == ')' {
			break
		}
		k++
	}
	r.replace(j, k)
	return k
}

var sensitiveSuffixes = [...]string{"password", "passwd", "secret", "token", "api_key", "apikey", "api-key", "access_key", "private_key"}

// sensitiveKey reports whether a key or word names a secret: it ends, case-insensitively, in one of the
// sensitiveSuffixes (GITHUB_TOKEN, client_secret, sessionToken, aws_secret_access_key).
func sensitiveKey(w []byte) bool {
	for _, s := range sensitiveSuffixes {
		if len(w) >= len(s) && equalFold(w[len(w)-len(s):], s) {
			return true
		}
	}
	return false
}

// equalFold compares ASCII case-insensitively against a lower-case literal.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// RedactText returns s with the secrets Redact recognises replaced, for text the gateway shows clients
// outside tool calls (an agent's error data).
func RedactText(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		return s
	}
	out, red := Redact(b)
	if !red {
		return s
	}
	var r string
	if json.Unmarshal(out, &r) != nil {
		return s
	}
	return r
}

// RedactJSON returns the JSON value v with secrets inside its strings replaced (v itself when none).
func RedactJSON(v []byte) []byte {
	out, _ := Redact(v)
	return out
}
