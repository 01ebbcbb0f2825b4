// Package agentlogin keeps what principals supply to log agents in and reads the agents' auth methods: the
// per-principal vault, the checks on a login's variables, and the scrubbing of login secrets from what an
// agent says back. It holds no session state; the session core asks it what to start an agent with.
package agentlogin

import (
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
)

// Vault keeps what principals supplied to log agents in: the variables of an env_var method and the
// agent method that last succeeded, per (principal, agent) — or per agent when the agents file shares the
// agent's login. Memory only: a restart forgets every login, and nothing of it is logged or stored.
type Vault struct {
	mu      sync.Mutex
	entries map[key]*entry // Guarded by mu.
}

// key is whose login it is: a principal's own, or the agent's shared one.
type key struct {
	agent     string
	principal string // "" when shared
	shared    bool
}

// entry is one principal's login to one agent. Guarded by Vault.mu.
type entry struct {
	envMethod   string            // the env_var method whose vars these are; "" = none
	vars        map[string]string // NAME → value
	agentMethod string            // the agent method whose authenticate succeeded; "" = none
}

// NewVault returns an empty vault.
func NewVault() *Vault { return &Vault{entries: map[key]*entry{}} }

// keyOf is the entry p's sessions of spec use.
func keyOf(spec agents.Spec, p principal.Principal) key {
	if spec.LoginShared {
		return key{agent: spec.Name, shared: true}
	}
	return key{agent: spec.Name, principal: p.ID}
}

// Env returns the variables p supplied for spec as "NAME=value", sorted; nil when none.
func (v *Vault) Env(spec agents.Spec, p principal.Principal) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entries[keyOf(spec, p)]
	if e == nil || len(e.vars) == 0 {
		return nil
	}
	out := make([]string, 0, len(e.vars))
	for _, n := range slices.Sorted(maps.Keys(e.vars)) {
		out = append(out, n+"="+e.vars[n])
	}
	return out
}

// AgentMethod returns the agent method that last logged p's sessions of spec in; "" when none.
func (v *Vault) AgentMethod(spec agents.Spec, p principal.Principal) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.entries[keyOf(spec, p)]; e != nil {
		return e.agentMethod
	}
	return ""
}

// SetEnv replaces p's variables for spec with those of one env_var method.
func (v *Vault) SetEnv(spec agents.Spec, p principal.Principal, method string, vars map[string]string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := keyOf(spec, p)
	e := v.entries[k]
	if e == nil {
		e = &entry{}
		v.entries[k] = e
	}
	e.envMethod, e.vars = method, maps.Clone(vars)
}

// SetAgentMethod records that authenticate with method succeeded for p's sessions of spec.
func (v *Vault) SetAgentMethod(spec agents.Spec, p principal.Principal, method string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := keyOf(spec, p)
	e := v.entries[k]
	if e == nil {
		e = &entry{}
		v.entries[k] = e
	}
	e.agentMethod = method
}

// Forget drops p's login to spec and reports whether there was one.
func (v *Vault) Forget(spec agents.Spec, p principal.Principal) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := keyOf(spec, p)
	_, had := v.entries[k]
	delete(v.entries, k)
	return had
}

// State is what is known of p's login to spec: the env_var method and names of its vars, the agent method.
func (v *Vault) State(spec agents.Spec, p principal.Principal) (envMethod string, names []string, agentMethod string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entries[keyOf(spec, p)]
	if e == nil {
		return "", nil, ""
	}
	for n := range e.vars {
		names = append(names, n)
	}
	sort.Strings(names)
	return e.envMethod, names, e.agentMethod
}
