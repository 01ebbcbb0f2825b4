package sessions

import "github.com/acp-gateway/gateway/internal/agents"

// The registry is its sessions' Host (host.go).
var _ Host = (*Registry)(nil)

func (r *Registry) sessionConfig() *sessionConfig { return r.sessCfg }

// outerLinks are what a session's files outside the core reach (lifecycle.go, reattach.go, follower.go,
// route.go, durable.go, nodeloss.go, runner_local.go, …), until they move to packages of their own. The core
// goes through Host instead; hostseam_test.go checks that it never uses these links.
type outerLinks struct {
	reg *Registry // Static after construction.
	// dur links the session to the store (durable.go); nil in memory mode. Set before the session is shared.
	dur *durable
	// remote makes the session a follower of another node's session (follower.go); nil for the sessions
	// this node owns. Set before the session is shared.
	remote *follower
}

// newSession makes a session of r that runs here: the core's makeSession with r as its Host, linked to r for
// the files outside the core. newFollower makes it a follower.
func newSession(r *Registry, id string, spec agents.Spec, opts CreateOptions) *Session {
	s := makeSession(r, id, spec, makeOptions{
		Cwd: opts.Cwd, AdditionalDirs: opts.AdditionalDirs, Policy: opts.PermissionPolicy, Owner: opts.Owner,
		MCPServers: opts.MCPServers, openCwd: !opts.follower && !opts.restored,
	})
	if opts.fork != nil {
		s.forkFrom(opts.fork.agentSID)
	}
	s.outerLinks = outerLinks{reg: r}
	s.setRunner(localRunner{s})
	return s
}

// entryChanged tells the session's directory writer that its entry changed (durable.go). It never blocks;
// memory mode returns at the nil check.
func (r *Registry) entryChanged(s *Session) {
	if d := s.dur; d != nil {
		d.dirty.Store(true)
		d.changes.Add(1)
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}
