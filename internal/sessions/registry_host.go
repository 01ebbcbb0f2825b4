package sessions

import (
	"os"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// registryHost is the registry as its sessions' Host (host.go): a type of its own, so that the methods the
// core calls stay off the Registry the faces use.
type registryHost struct{ r *Registry }

var _ core.Host = registryHost{}

func (h registryHost) SessionConfig() *core.SessionConfig { return h.r.sessCfg }

func (h registryHost) Now() time.Time { return h.r.now() }

func (h registryHost) ShuttingDown() bool { return h.r.shuttingDown() }

func (h registryHost) Reconfine(dir string) (*os.Root, error) { return h.r.admit.Reconfine(dir) }

func (h registryHost) EntryChanged(s *Session) { h.r.entryChanged(s) }

// newSession makes a session of r that runs here: the core's makeSession with r as its Host, and a local
// runner that holds r for the role code. newFollower makes it a follower.
func newSession(r *Registry, id string, spec agents.Spec, opts CreateOptions) *Session {
	s := core.MakeSession(registryHost{r}, id, spec, core.MakeOptions{
		Cwd: opts.Cwd, AdditionalDirs: opts.AdditionalDirs, Policy: opts.PermissionPolicy, Owner: opts.Owner,
		MCPServers: opts.MCPServers, OpenCwd: !opts.follower && !opts.restored,
	})
	if opts.fork != nil {
		core.ControlOf(s).ForkFrom(opts.fork.agentSID)
	}
	core.ControlOf(s).SetRunner(&localRunner{s: s, reg: r})
	return s
}

// entryChanged tells the session's directory writer that its entry changed (package durable). It never blocks;
// memory mode and a follower return at the nil check.
func (r *Registry) entryChanged(s *Session) {
	if d := durableOf(s); d != nil {
		d.Changed()
	}
}
