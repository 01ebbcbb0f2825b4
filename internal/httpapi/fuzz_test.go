package httpapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
)

// FuzzDecodeBodies feeds arbitrary bytes to the REST body decoder for every request type: it must answer a
// problem in the client's terms (never panic, never a 5xx, never a Go type name) or a value that re-encodes.
func FuzzDecodeBodies(f *testing.F) {
	f.Add([]byte(`{"text":"hello"}`))
	f.Add([]byte(`{"prompt":[{"type":"text","text":"x"}]}`))
	f.Add([]byte(`{"outcome":"cancelled"}`))
	f.Add([]byte(`{"role":"viewer"}`))
	f.Add([]byte(`{"role":"collaborator","extra":1}`))
	f.Add([]byte(`{"mcpServers":[{"type":"http","name":"a","url":"http://x","headers":[{"name":"H","value":"v"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []any{&createRequest{}, &promptRequest{}, &answerRequest{}, &shareRequest{}} {
			err := decodeJSON(body, v)
			if err == nil {
				if _, merr := json.Marshal(v); merr != nil {
					t.Fatalf("decoded value does not re-encode: %v", merr)
				}
				if cr, ok := v.(*createRequest); ok {
					// mcpServers is parsed after decoding; its errors are in the client's terms too.
					if _, perr := agents.ParseMCPServers(cr.MCPServers); perr != nil && (strings.Contains(perr.Error(), "agents.") || strings.Contains(perr.Error(), "json.")) {
						t.Fatalf("mcpServers error %q names a Go type", perr)
					}
				}
				continue
			}
			var p *Problem
			if !errors.As(err, &p) || p.Status != 400 {
				t.Fatalf("decode error %v is not a 400 problem", err)
			}
			if strings.Contains(p.Detail, "httpapi.") || strings.Contains(p.Detail, "json.") {
				t.Fatalf("decode error %q names a Go type", p.Detail)
			}
		}
	})
}
