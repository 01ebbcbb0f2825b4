package agents

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAgentsFileMCPServers: an agent's mcpServers in the agents file are read in ACP's shape and written to
// agents the same way (arrays never null, no type on stdio servers).
func TestAgentsFileMCPServers(t *testing.T) {
	specs, err := ParseAgentServers([]byte(`{"agent_servers": {"a": {"command": "a", "mcpServers": [
		{"name": "fs", "command": "mcp-fs", "args": ["--root", "/srv"], "env": [{"name": "TOKEN", "value": "s3cret-env"}]},
		{"type": "http", "name": "web", "url": "https://mcp.example/", "headers": [{"name": "Authorization", "value": "Bearer s3cret-hdr"}]},
		{"type": "sse", "name": "events", "url": "http://127.0.0.1:9/sse"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(specs[0].MCPServers)
	want := `[{"name":"fs","command":"mcp-fs","args":["--root","/srv"],"env":[{"name":"TOKEN","value":"s3cret-env"}]},` +
		`{"type":"http","name":"web","url":"https://mcp.example/","headers":[{"name":"Authorization","value":"Bearer s3cret-hdr"}]},` +
		`{"type":"sse","name":"events","url":"http://127.0.0.1:9/sse","headers":[]}]`
	if string(got) != want {
		t.Fatalf("sent to agents as\n%s\nwant\n%s", got, want)
	}
	if b, _ := json.Marshal(specs[0]); strings.Contains(string(b), "s3cret") {
		t.Fatalf("the spec as clients see it carries a secret: %s", b)
	}
}

// TestMCPServersRefused: malformed entries are refused with an error that names the entry and field and
// never a value (values may be secrets).
func TestMCPServersRefused(t *testing.T) {
	for _, bad := range []string{
		`{}`,
		`[1]`,
		`[{"command": "x"}]`,
		`[{"name": "a"}]`,
		`[{"name": "a", "command": "x", "url": "http://x"}]`,
		`[{"type": "http", "name": "a", "url": "ftp://s3cret"}]`,
		`[{"type": "http", "name": "a", "url": "http://x", "command": "s3cret"}]`,
		`[{"type": "acp", "name": "a", "id": "x"}]`,
		`[{"type": "ws", "name": "a", "url": "ws://x"}]`,
		`[{"name": "a", "command": "x", "env": [{"name": "K=s3cret", "value": "s3cret"}]}]`,
		`[{"name": "a", "command": "x", "env": [{"name": "K", "value": 5}]}]`,
		`[{"name": "a", "command": "x", "env": {"K": "s3cret"}}]`,
		`[{"type": "http", "name": "a", "url": "http://x", "headers": [{"name": "H", "value": "s3cret\r\nX: y"}]}]`,
		`[{"name": "a", "command": "x"}, {"type": "http", "name": "a", "url": "http://x"}]`,
	} {
		_, err := ParseMCPServers(json.RawMessage(bad))
		if err == nil {
			t.Errorf("%s: accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error %q shows a value", bad, err)
		}
	}
	if _, err := ParseAgentServers([]byte(`{"agent_servers": {"a": {"command": "a", "mcpServers": [{"name": "x"}]}}}`)); err == nil || !strings.Contains(err.Error(), `agent "a"`) {
		t.Fatalf("agents file with a bad server: %v", err)
	}
}

// FuzzParseMCPServers: any input is parsed or refused without panicking, and a refusal never shows a value
// of the input's env or headers.
func FuzzParseMCPServers(f *testing.F) {
	f.Add([]byte(`[{"name":"a","command":"x","env":[{"name":"K","value":"secretvalue"}]}]`))
	f.Add([]byte(`[{"type":"http","name":"a","url":"http://x","headers":[{"name":"H","value":"secretvalue"}]}]`))
	f.Add([]byte(`[{"type":"sse","name":"a","url":"nope","headers":[{"name":"H","value":"secretvalue"}]}]`))
	f.Add([]byte(`[{"name":"a","command":"x","env":[{"name":"K=secretvalue","value":"secretvalue"}]}]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := ParseMCPServers(data)
		if err == nil {
			if _, merr := json.Marshal(list); merr != nil {
				t.Fatalf("parsed servers do not encode: %v", merr)
			}
			return
		}
		var generic []struct {
			Name, Type, URL, Command string
			Env, Headers             []struct{ Name, Value string }
		}
		_ = json.Unmarshal(data, &generic)
		// Only values that appear nowhere else an error may quote (names, types).
		var quotable strings.Builder
		for _, g := range generic {
			quotable.WriteString(g.Name + "\x00" + g.Type + "\x00")
		}
		for _, g := range generic {
			for _, nv := range append(g.Env, g.Headers...) {
				if len(nv.Value) >= 6 && !strings.Contains(quotable.String(), nv.Value) && strings.Contains(err.Error(), nv.Value) {
					t.Fatalf("error %q shows the value %q", err, nv.Value)
				}
			}
		}
	})
}
