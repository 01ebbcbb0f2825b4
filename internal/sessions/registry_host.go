package sessions

import "github.com/acp-gateway/gateway/internal/agents"

// The registry is its sessions' Host (host.go).
var _ Host = (*Registry)(nil)

func (r *Registry) sessionConfig() *sessionConfig { return r.sessCfg }

// newSession makes a session of r that runs here: the core's makeSession with r as its Host, and a local
// runner that holds r for the role code. newFollower makes it a follower.
func newSession(r *Registry, id string, spec agents.Spec, opts CreateOptions) *Session {
	s := makeSession(r, id, spec, makeOptions{
		Cwd: opts.Cwd, AdditionalDirs: opts.AdditionalDirs, Policy: opts.PermissionPolicy, Owner: opts.Owner,
		MCPServers: opts.MCPServers, openCwd: !opts.follower && !opts.restored,
	})
	if opts.fork != nil {
		s.forkFrom(opts.fork.agentSID)
	}
	s.setRunner(&localRunner{s: s, reg: r})
	return s
}

// entryChanged tells the session's directory writer that its entry changed (durable.go). It never blocks;
// memory mode and a follower return at the nil check.
func (r *Registry) entryChanged(s *Session) {
	if d := durableOf(s); d != nil {
		d.dirty.Store(true)
		d.changes.Add(1)
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}
