package agentlogin

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckLoginVars feeds arbitrary variables (and an arbitrary method declaration) to the env_var login's
// check: it refuses with a VarsError or keeps only declared, non-reserved names whose values are text
// within the bounds, every required one among them.
func FuzzCheckLoginVars(f *testing.F) {
	method := `{"id":"key","type":"env_var","vars":[{"name":"API_KEY"},{"name":"REGION","secret":false,"optional":true}]}`
	f.Add(method, `{"API_KEY":"sk-0123456789"}`)
	f.Add(method, `{"API_KEY":"sk-0123456789","REGION":""}`)
	f.Add(method, `{"API_KEY":"abc"}`)
	f.Add(method, `{"API_KEY":"sk-0123\u0000456789"}`)
	f.Add(method, `{"API_KEY":"sk-0123456789","PATH":"/tmp"}`)
	f.Add(method, `{}`)
	f.Add(`{"id":"m","type":"env_var","vars":[{"name":"LD_PRELOAD","secret":false}]}`, `{"LD_PRELOAD":"/tmp/x.so"}`)
	f.Add(`{"id":"m","type":"env_var","vars":[{"name":"A=B"}]}`, `{"A=B":"value-1234"}`)
	f.Add(`{"id":"m","type":"env_var","vars":[{"name":""}]}`, `{"":"value-1234"}`)
	f.Fuzz(func(t *testing.T, methodJSON, varsJSON string) {
		var m AuthMethod
		var vars map[string]string
		if json.Unmarshal([]byte(methodJSON), &m) != nil || json.Unmarshal([]byte(varsJSON), &vars) != nil {
			t.Skip()
		}
		// Strings the fuzzer builds directly may hold invalid UTF-8, which JSON would have replaced.
		for k, v := range vars {
			if strings.HasPrefix(k, "raw:") {
				vars[k] = v + "\xff"
			}
		}
		kept, err := CheckVars(m, vars)
		if err != nil {
			if ve := (*VarsError)(nil); !errors.As(err, &ve) {
				t.Fatalf("error %v is not a VarsError", err)
			}
			return
		}
		declared := map[string]bool{}
		for _, v := range m.Vars {
			declared[v.Name] = true
			if !v.Optional && kept[v.Name] == "" {
				t.Fatalf("required %q not kept: %v", v.Name, kept)
			}
		}
		for k := range vars {
			if !declared[k] {
				t.Fatalf("undeclared %q accepted", k)
			}
		}
		for k, v := range kept {
			switch {
			case ReservedVar(k):
				t.Fatalf("reserved %q kept", k)
			case v == "" || len(v) > MaxValue || !utf8.ValidString(v) || strings.ContainsRune(v, 0):
				t.Fatalf("unusable value of %q kept (%d bytes)", k, len(v))
			case v != vars[k]:
				t.Fatalf("value of %q changed", k)
			}
		}
	})
}
