package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MCP transports, as ACP names them in an McpServer's "type" ("" is stdio, which has no type on the wire).
const (
	MCPStdio = "stdio"
	MCPHTTP  = "http"
	MCPSSE   = "sse"
)

// MCPServer is one MCP server an agent is told about on session/new (and session/load, session/resume), in
// ACP's own shape: stdio `{name, command, args, env}` or `{type: "http"|"sse", name, url, headers}`. Env and
// header values are secrets the operator or client chose: they go to the agent and nowhere else (no response,
// log line or frame carries them; errors name the server and the field, never a value).
type MCPServer struct {
	Type    string      // MCPStdio, MCPHTTP or MCPSSE
	Name    string      // unique per session
	Command string      // stdio
	Args    []string    // stdio
	Env     []NameValue // stdio: added to the server's environment
	URL     string      // http, sse
	Headers []NameValue // http, sse
}

// NameValue is ACP's EnvVariable and HttpHeader.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MarshalJSON writes the server as ACP sends it to agents. Arrays are never null: ACP requires them.
func (m MCPServer) MarshalJSON() ([]byte, error) {
	nv := func(l []NameValue) []NameValue {
		if l == nil {
			return []NameValue{}
		}
		return l
	}
	if m.Type == MCPStdio {
		args := m.Args
		if args == nil {
			args = []string{}
		}
		return json.Marshal(struct {
			Name    string      `json:"name"`
			Command string      `json:"command"`
			Args    []string    `json:"args"`
			Env     []NameValue `json:"env"`
		}{m.Name, m.Command, args, nv(m.Env)})
	}
	return json.Marshal(struct {
		Type    string      `json:"type"`
		Name    string      `json:"name"`
		URL     string      `json:"url"`
		Headers []NameValue `json:"headers"`
	}{m.Type, m.Name, m.URL, nv(m.Headers)})
}

// Equal reports whether two servers are configured the same (values included).
func (m MCPServer) Equal(o MCPServer) bool {
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(o)
	return bytes.Equal(a, b)
}

// mcpWire is an McpServer as clients and the agents file write it.
type mcpWire struct {
	Type    *string          `json:"type"`
	Name    *string          `json:"name"`
	Command *string          `json:"command"`
	Args    []string         `json:"args"`
	Env     *json.RawMessage `json:"env"`
	URL     *string          `json:"url"`
	Headers *json.RawMessage `json:"headers"`
}

// ParseMCPServers reads an ACP `mcpServers` array. null or absent is none. Errors name the entry and the field
// that is wrong, never a value (values may be secrets).
func ParseMCPServers(raw json.RawMessage) ([]MCPServer, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, errors.New("mcpServers must be an array of MCP server objects")
	}
	out := make([]MCPServer, 0, len(list))
	seen := map[string]bool{}
	for i, item := range list {
		m, err := parseMCPServer(item)
		if err != nil {
			return nil, fmt.Errorf("mcpServers[%d]: %w", i, err)
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("mcpServers[%d]: the name %q is used twice", i, m.Name)
		}
		seen[m.Name] = true
		out = append(out, m)
	}
	return out, nil
}

func parseMCPServer(item json.RawMessage) (MCPServer, error) {
	var w mcpWire
	if err := json.Unmarshal(item, &w); err != nil {
		return MCPServer{}, errors.New("must be an object with string name, type, command, url and arrays args, env, headers")
	}
	m := MCPServer{Type: MCPStdio}
	if w.Type != nil && *w.Type != "" {
		m.Type = *w.Type
	}
	if w.Name == nil || strings.TrimSpace(*w.Name) == "" {
		return m, errors.New("name is required")
	}
	m.Name = *w.Name
	if len(m.Name) > 128 || strings.ContainsAny(m.Name, "\x00\n\r") {
		return m, errors.New("name must be at most 128 bytes on one line")
	}
	var err error
	switch m.Type {
	case MCPStdio:
		if w.Command == nil || *w.Command == "" {
			return m, fmt.Errorf("server %q: command is required for a stdio server", m.Name)
		}
		if w.URL != nil || w.Headers != nil {
			return m, fmt.Errorf("server %q: url and headers are for http and sse servers", m.Name)
		}
		m.Command, m.Args = *w.Command, w.Args
		if m.Env, err = nameValues(w.Env, "env", true); err != nil {
			return m, fmt.Errorf("server %q: %w", m.Name, err)
		}
	case MCPHTTP, MCPSSE:
		if w.URL == nil || !(strings.HasPrefix(*w.URL, "http://") || strings.HasPrefix(*w.URL, "https://")) {
			return m, fmt.Errorf("server %q: url is required and must be http:// or https://", m.Name)
		}
		if w.Command != nil || w.Args != nil || w.Env != nil {
			return m, fmt.Errorf("server %q: command, args and env are for stdio servers", m.Name)
		}
		m.URL = *w.URL
		if m.Headers, err = nameValues(w.Headers, "headers", false); err != nil {
			return m, fmt.Errorf("server %q: %w", m.Name, err)
		}
	default:
		return m, fmt.Errorf("server %q: type must be \"http\", \"sse\" or absent (stdio)", m.Name)
	}
	return m, nil
}

// nameValues reads an array of {name, value}. An env name must be usable as one (no '=', no NUL).
func nameValues(raw *json.RawMessage, field string, env bool) ([]NameValue, error) {
	if raw == nil || string(*raw) == "null" {
		return nil, nil
	}
	var list []struct {
		Name  *string `json:"name"`
		Value *string `json:"value"`
	}
	if json.Unmarshal(*raw, &list) != nil {
		return nil, fmt.Errorf("%s must be an array of {name, value} strings", field)
	}
	out := make([]NameValue, 0, len(list))
	for i, nv := range list {
		if nv.Name == nil || *nv.Name == "" || nv.Value == nil {
			return nil, fmt.Errorf("%s[%d] needs a name and a value", field, i)
		}
		badName, badValue := "\x00\r\n:", "\x00\r\n"
		if env {
			badName, badValue = "\x00=", "\x00"
		}
		if strings.ContainsAny(*nv.Name, badName) || strings.ContainsAny(*nv.Value, badValue) {
			return nil, fmt.Errorf("%s[%d] has a character its name or value cannot hold", field, i)
		}
		out = append(out, NameValue{Name: *nv.Name, Value: *nv.Value})
	}
	return out, nil
}

// minSecretBytes is the shortest env or header value treated as a secret to scrub: shorter ones would blank
// out common words.
const minSecretBytes = 4

// MCPSecrets returns the env and header values of servers that Scrub removes from what an agent says back.
func MCPSecrets(servers []MCPServer) []string {
	var out []string
	for _, m := range servers {
		for _, nv := range append(append([]NameValue(nil), m.Env...), m.Headers...) {
			if len(nv.Value) >= minSecretBytes {
				out = append(out, nv.Value)
			}
		}
	}
	return out
}

// Scrub replaces every secret in text with [REDACTED] and reports whether it found one.
func Scrub(text string, secrets []string) (string, bool) {
	found := false
	for _, v := range secrets {
		if v != "" && strings.Contains(text, v) {
			text, found = strings.ReplaceAll(text, v, "[REDACTED]"), true
		}
	}
	return text, found
}
