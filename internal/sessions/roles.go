package sessions

import (
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
)

// The role state of a session, for code that starts from a bare *Session (the registry's loops over its
// sessions, entryChanged, routed commands): the session's runner holds it, so the core holds none of it.

// localOf is the local runner of a session this node runs; nil for a follower.
func localOf(s *Session) *localRunner {
	if r, ok := core.ControlOf(s).Runner().(*localRunner); ok {
		return r
	}
	return nil
}

// durableOf is the store link of a session this node runs in a store mode; nil in memory mode and for a
// follower, which never writes the store.
func durableOf(s *Session) *durable.Link {
	if r := localOf(s); r != nil {
		return r.dur
	}
	return nil
}

// registryOf is the registry that holds s: every session's Host is its registry.
func registryOf(s *Session) *Registry { return core.ControlOf(s).SessionHost().(registryHost).r }
