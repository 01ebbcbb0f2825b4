package termlogin

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/acp-gateway/gateway/internal/agents"
)

// Method is a terminal auth method as the agent described it in its initialize answer.
type Method struct {
	ID   string            `json:"id"`
	Name string            `json:"name"`
	Type string            `json:"type"`
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"`
}

// findMethod returns the terminal method id among an initialize answer's authMethods.
func findMethod(authMethods json.RawMessage, id string) (Method, bool) {
	var list []json.RawMessage
	if json.Unmarshal(authMethods, &list) != nil {
		return Method{}, false
	}
	for _, raw := range list {
		var m Method
		if json.Unmarshal(raw, &m) == nil && m.Type == "terminal" && m.ID == id {
			return m, true
		}
	}
	return Method{}, false
}

// reservedEnv are variables a method's env may not set: they are the gateway's (where the login runs, what
// finds its processes), not the agent's to choose.
func reservedEnv(k string) bool {
	switch k {
	case "HOME", "TMPDIR", "PATH":
		return true
	}
	return strings.HasPrefix(k, "ACP_GATEWAY")
}

// commandLine is the login command: the agent's command and args followed by the method's args (ACP: the
// args are "additional arguments to pass when running the agent binary"); its environment is the agent's
// (trusted, the operator's) and then the method's, without the reserved variables.
func commandLine(spec agents.Spec, m Method, env []string) (args, trusted, full []string) {
	args = append(append([]string(nil), spec.Args...), m.Args...)
	trusted = append([]string(nil), env...)
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		trusted = append(trusted, k+"="+spec.Env[k])
	}
	full = append(append([]string(nil), trusted...), "TERM=xterm-256color")
	keys = keys[:0]
	for k := range m.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !reservedEnv(k) && k != "" && !strings.ContainsAny(k, "=\x00") && !strings.Contains(m.Env[k], "\x00") {
			full = append(full, fmt.Sprintf("%s=%s", k, m.Env[k]))
		}
	}
	return args, trusted, full
}
