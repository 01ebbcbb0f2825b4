package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/acp-gateway/gateway/internal/confine"
)

// Kinds of agent.
const (
	KindACP     = "acp"     // an external process speaking ACP over stdio
	KindBuiltin = "builtin" // an in-process agent speaking ACP over pipes
	KindEvents  = "events"  // an external process speaking the native event dialect (docs/events.md), served through an in-process ACP adapter (Spec.Builtin)
)

// BuiltinFunc runs an in-process agent on the given streams until in reaches EOF or ctx is done.
type BuiltinFunc func(ctx context.Context, in io.Reader, out io.Writer) error

// Spec describes one configured agent. Clients choose agents by name only, never by command line.
type Spec struct {
	Name    string            `json:"name"`
	Kind    string            `json:"kind"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"-"` // added to the allowlisted environment; never shown to clients
	// Home is "isolated" for an agent that gets a HOME of its own (its state kept apart from the user's),
	// "per-principal" for one HOME per principal under HomeRoot (home.go), or "" for the gateway's HOME.
	Home string `json:"-"`
	// HomeRoot holds the per-principal HOMEs of a "per-principal" agent; "" otherwise.
	HomeRoot string `json:"-"`
	// AuthMethod, when set, is sent as ACP `authenticate {methodId}` after initialize and before
	// session/new (codex-acp with an API key in its env: "openai-api-key").
	AuthMethod string `json:"-"`
	// MCPServers are passed to the agent on every session/new (with the ones a client adds), in ACP's shape.
	// Their env and headers are secrets: never shown to clients.
	MCPServers []MCPServer `json:"-"`
	// Confine is what the agent's processes may use besides their cwd, HOME, TMPDIR and the system
	// directories, when the gateway confines them (agents file: "confine": {"read": [...], "write": [...]}).
	Confine confine.Extra `json:"-"`
	// LoginShared makes what one principal supplies to log the agent in (its env_var methods) serve every
	// principal's sessions of it (agents file: "login": {"shared": true}); false keeps it to that principal.
	LoginShared bool        `json:"-"`
	Builtin     BuiltinFunc `json:"-"` // KindBuiltin only
}

// LoginConfig is an agent's "login" object in the agents file.
type LoginConfig struct {
	Shared bool `json:"shared"` // one principal's login serves everyone's sessions of the agent
}

// agentServersFile is the shape of Zed's `agent_servers` setting, which users already have.
type agentServersFile struct {
	AgentServers map[string]struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Kind    string            `json:"kind"`
		Home    string            `json:"home"`
		Auth    string            `json:"authenticate"`
		MCP     json.RawMessage   `json:"mcpServers"`
		Confine confine.Extra     `json:"confine"`
		Login   LoginConfig       `json:"login"`
	} `json:"agent_servers"`
}

// ParseAgentServers reads agents from a Zed-style `{"agent_servers": {name: {command, args, env}}}` document.
func ParseAgentServers(data []byte) ([]Spec, error) {
	specs, err := parseAgentServers(data)
	if err != nil {
		return nil, fmt.Errorf("agents file: %w", err)
	}
	return specs, nil
}

// parseAgentServers is ParseAgentServers; its errors say what is wrong but not in which file.
func parseAgentServers(data []byte) ([]Spec, error) {
	var f agentServersFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, describeJSONError(data, err)
	}
	if f.AgentServers == nil {
		return nil, errors.New(`no "agent_servers" object`)
	}
	names := make([]string, 0, len(f.AgentServers))
	for n := range f.AgentServers {
		names = append(names, n)
	}
	sort.Strings(names)
	specs := make([]Spec, 0, len(names))
	for _, n := range names {
		a := f.AgentServers[n]
		kind := a.Kind
		if kind == "" {
			kind = KindACP
		}
		if kind != KindACP && kind != KindEvents {
			return nil, fmt.Errorf("agent %q: unsupported kind %q", n, kind)
		}
		if a.Command == "" {
			return nil, fmt.Errorf("agent %q has no command", n)
		}
		if a.Home != "" && a.Home != HomeIsolated && a.Home != HomePerPrincipal {
			return nil, fmt.Errorf(`agent %q: "home" must be "isolated", "per-principal" or absent`, n)
		}
		if a.Home == HomePerPrincipal && kind != KindACP {
			return nil, fmt.Errorf(`agent %q: "home": "per-principal" needs kind "acp"`, n)
		}
		mcp, err := ParseMCPServers(a.MCP)
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", n, err)
		}
		if err := a.Confine.Check(); err != nil {
			return nil, fmt.Errorf("agents file: agent %q: %w", n, err)
		}
		specs = append(specs, Spec{Name: n, Kind: kind, Command: a.Command, Args: a.Args, Env: a.Env, Home: a.Home,
			AuthMethod: a.Auth, MCPServers: mcp, Confine: a.Confine, LoginShared: a.Login.Shared})
	}
	return specs, nil
}

// ReadAgentServers reads a Zed-style agents file. Its errors do not repeat the path: the caller names the
// file and the flag that gave it.
func ReadAgentServers(path string) ([]Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseAgentServers(data)
}

// ParseAgentFlag parses `name=command arg ...` (the --agent flag). Arguments split on spaces; quote nothing.
func ParseAgentFlag(s string) (Spec, error) {
	name, cmdline, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	fields := strings.Fields(cmdline)
	if !ok || name == "" || len(fields) == 0 {
		return Spec{}, fmt.Errorf("--agent %q: want name=command [args...]", s)
	}
	return Spec{Name: name, Kind: KindACP, Command: fields[0], Args: fields[1:]}, nil
}

// ValidName reports whether name is usable as an agent name in URLs and logs.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
