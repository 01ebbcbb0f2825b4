package translate

import (
	"encoding/json"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpschema"
)

func mustUpdate(t testing.TB, c *Context, params string) Update {
	t.Helper()
	u, err := c.Update([]byte(params))
	if err != nil {
		t.Fatalf("Update(%s): %v", params, err)
	}
	if !json.Valid(u.Params) {
		t.Fatalf("Update(%s) produced invalid JSON %s", params, u.Params)
	}
	return u
}

// forwardedValid checks what translate forwards from an agent against the unstable schema, which is what
// agents speak.
func forwardedValid(t testing.TB, params []byte) {
	t.Helper()
	if err := acpschema.ValidateParams(acpschema.Unstable, "session/update", params); err != nil {
		t.Errorf("forwarded params %s: %v", params, err)
	}
}

// originatedValid checks what the gateway itself originates against the stable schema: every ACP client
// must accept it.
func originatedValid(t testing.TB, params []byte) {
	t.Helper()
	if err := acpschema.ValidateParams(acpschema.Stable, "session/update", params); err != nil {
		t.Errorf("originated params %s: %v", params, err)
	}
}

func chunk(kind, text string) string {
	b, _ := json.Marshal(text)
	return `{"sessionId":"agent-s","update":{"sessionUpdate":"` + kind + `","content":{"type":"text","text":` + string(b) + `}}}`
}

func field(t testing.TB, params []byte, path ...string) json.RawMessage {
	t.Helper()
	cur := json.RawMessage(params)
	for _, p := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cur, &m); err != nil {
			t.Fatalf("%s: %v", cur, err)
		}
		cur = m[p]
	}
	return cur
}

func str(t testing.TB, params []byte, path ...string) string {
	t.Helper()
	var s string
	raw := field(t, params, path...)
	if raw == nil {
		return ""
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%v at %v in %s", err, path, params)
	}
	return s
}
