package agentlogin

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
)

// TestCheckVars: a login's variables must be the method's: no unknown names, every required one, no
// reserved name, text values, secrets long enough to be scrubbed; empty optional ones are dropped.
func TestCheckVars(t *testing.T) {
	var m AuthMethod
	if err := json.Unmarshal([]byte(`{"id":"k","type":"env_var","vars":[{"name":"KEY"},{"name":"REGION","secret":false,"optional":true},{"name":"PATH","optional":true}]}`), &m); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vars map[string]string
		ok   bool
	}{
		{map[string]string{"KEY": "abcd"}, true},
		{map[string]string{"KEY": "abcd", "REGION": ""}, true},
		{map[string]string{"KEY": "abcd", "REGION": "e"}, true}, // not secret: any length
		{map[string]string{}, false},
		{map[string]string{"KEY": ""}, false},
		{map[string]string{"KEY": "abc"}, false}, // a secret too short to scrub
		{map[string]string{"KEY": "abcd", "OTHER": "x"}, false},
		{map[string]string{"KEY": "abcd", "PATH": "/tmp"}, false},
		{map[string]string{"KEY": "ab\x00cd"}, false},
		{map[string]string{"KEY": "ab\xffcd"}, false},
	} {
		kept, err := CheckVars(m, c.vars)
		if c.ok != (err == nil) || err != nil && !errors.As(err, new(*VarsError)) {
			t.Errorf("%q: %v, want ok=%v", c.vars, err, c.ok)
		}
		if err == nil {
			if _, has := kept["REGION"]; has && c.vars["REGION"] == "" {
				t.Errorf("%q: an empty optional variable was kept", c.vars)
			}
		}
	}
}

// TestLoginVaultPerPrincipal: what ann supplies is hers alone, unless the agent's login is shared.
func TestLoginVaultPerPrincipal(t *testing.T) {
	v := NewVault()
	ann, bob := principal.Principal{ID: "ann"}, principal.Principal{ID: "bob"}
	own, shared := agents.Spec{Name: "a"}, agents.Spec{Name: "s", LoginShared: true}
	v.SetEnv(own, ann, "k", map[string]string{"KEY": "ann-key"})
	v.SetEnv(shared, ann, "k", map[string]string{"KEY": "team-key"})
	if got := v.Env(own, ann); !slices.Equal(got, []string{"KEY=ann-key"}) {
		t.Errorf("ann's env for a: %q", got)
	}
	if got := v.Env(own, bob); got != nil {
		t.Errorf("bob got ann's login to a: %q", got)
	}
	if got := v.Env(shared, bob); !slices.Equal(got, []string{"KEY=team-key"}) {
		t.Errorf("bob's env for the shared agent: %q", got)
	}
	if !v.Forget(own, ann) || v.Env(own, ann) != nil || v.Forget(own, ann) {
		t.Error("forget did not drop ann's login, or reported one twice")
	}
	if got := SecretsOf([]string{"A=abcd", "B=x", "C=a=b=c"}); !slices.Equal(got, []string{"abcd", "a=b=c"}) {
		t.Errorf("SecretsOf: %q", got)
	}
}

// TestScrubParams: a login secret an agent quotes in an update is replaced, unless that would break
// the JSON; params without one come back as they are.
func TestScrubParams(t *testing.T) {
	secrets := []string{"sk-abcdef123"}
	for _, c := range []struct{ in, want string }{
		{`{"text":"key sk-abcdef123 and sk-abcdef123"}`, `{"text":"key [REDACTED] and [REDACTED]"}`},
		{`{"text":"nothing here"}`, `{"text":"nothing here"}`},
	} {
		if got := string(ScrubParams(json.RawMessage(c.in), secrets)); got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
	odd := []string{`a","b`}
	if in := `{"x":"a","b":1}`; string(ScrubParams(json.RawMessage(in), odd)) != in {
		t.Error("a secret spanning JSON syntax was replaced into invalid JSON")
	}
}
