package sessions

import (
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
)

// loginVault keeps what principals supplied to log agents in: the variables of an env_var method and the
// agent method that last succeeded, per (principal, agent) — or per agent when the agents file shares the
// agent's login. Memory only: a restart forgets every login, and nothing of it is logged or stored.
type loginVault struct {
	mu      sync.Mutex
	entries map[loginKey]*loginEntry // Guarded by mu.
}

// loginKey is whose login it is: a principal's own, or the agent's shared one.
type loginKey struct {
	agent     string
	principal string // "" when shared
	shared    bool
}

// loginEntry is one principal's login to one agent. Guarded by loginVault.mu.
type loginEntry struct {
	envMethod   string            // the env_var method whose vars these are; "" = none
	vars        map[string]string // NAME → value
	agentMethod string            // the agent method whose authenticate succeeded; "" = none
}

func newLoginVault() *loginVault { return &loginVault{entries: map[loginKey]*loginEntry{}} }

// keyOf is the entry p's sessions of spec use.
func keyOf(spec agents.Spec, p principal.Principal) loginKey {
	if spec.LoginShared {
		return loginKey{agent: spec.Name, shared: true}
	}
	return loginKey{agent: spec.Name, principal: p.ID}
}

// env returns the variables p supplied for spec as "NAME=value", sorted; nil when none.
func (v *loginVault) env(spec agents.Spec, p principal.Principal) []string {
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

// agentMethod returns the agent method that last logged p's sessions of spec in; "" when none.
func (v *loginVault) agentMethod(spec agents.Spec, p principal.Principal) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.entries[keyOf(spec, p)]; e != nil {
		return e.agentMethod
	}
	return ""
}

// setEnv replaces p's variables for spec with those of one env_var method.
func (v *loginVault) setEnv(spec agents.Spec, p principal.Principal, method string, vars map[string]string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := keyOf(spec, p)
	e := v.entries[k]
	if e == nil {
		e = &loginEntry{}
		v.entries[k] = e
	}
	e.envMethod, e.vars = method, maps.Clone(vars)
}

// setAgentMethod records that authenticate with method succeeded for p's sessions of spec.
func (v *loginVault) setAgentMethod(spec agents.Spec, p principal.Principal, method string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := keyOf(spec, p)
	e := v.entries[k]
	if e == nil {
		e = &loginEntry{}
		v.entries[k] = e
	}
	e.agentMethod = method
}

// forget drops p's login to spec and reports whether there was one.
func (v *loginVault) forget(spec agents.Spec, p principal.Principal) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := keyOf(spec, p)
	_, had := v.entries[k]
	delete(v.entries, k)
	return had
}

// state is what is known of p's login to spec: the env_var method and names of its vars, the agent method.
func (v *loginVault) state(spec agents.Spec, p principal.Principal) (envMethod string, names []string, agentMethod string) {
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
