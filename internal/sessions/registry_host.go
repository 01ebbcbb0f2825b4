package sessions

import "github.com/acp-gateway/gateway/internal/agents"

// The registry is its sessions' Host (host.go).
var _ Host = (*Registry)(nil)

func (r *Registry) sessionConfig() *sessionConfig { return r.sessCfg }

// registryLink is the registry as a session's files outside the core reach it (lifecycle.go, reattach.go,
// follower.go, route.go, durable.go, nodeloss.go, runner_local.go, …), until they move to packages of their
// own. The core goes through Host instead; hostseam_test.go checks that it never uses this link.
type registryLink struct {
	reg *Registry // Static after construction.
}

// newSession makes a session of r: the core's makeSession with r as its Host, linked to r for the files
// outside the core.
func newSession(r *Registry, id string, spec agents.Spec, opts CreateOptions) *Session {
	s := makeSession(r, id, spec, opts)
	s.registryLink = registryLink{reg: r}
	return s
}
