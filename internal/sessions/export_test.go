package sessions

import (
	"context"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// Internal helpers the package's external tests (sessions_test, which may import internal/store/jsstore)
// share with the internal ones.

// TestAgentBin builds internal/testagent once for the package's tests.
var TestAgentBin = testAgentBin

// ExpireStoredAt runs one round of the retention janitor with the given cutoff.
func (r *Registry) ExpireStoredAt(ctx context.Context, cutoff time.Time) int {
	return r.expireStored(ctx, cutoff)
}

// PauseIdleFollowersAt runs the idle reaper's follower round with the given cutoff.
func (r *Registry) PauseIdleFollowersAt(cutoff time.Time) int { return r.pauseIdleFollowers(cutoff) }

// ClientMCP is what the client added to the session's MCP servers (what a re-attach passes the agent).
func ClientMCP(s *Session) []agents.MCPServer { return core.ControlOf(s).ClientMCPServers() }

// TakeOver is this node's takeover of a lost node's session, as its node watch runs it: the claim, the
// closing frames and the release.
func (r *Registry) TakeOver(ctx context.Context, e store.DirEntry, rev uint64) (store.DirEntry, error) {
	return r.takeover.CloseForLoss(ctx, e, rev)
}
