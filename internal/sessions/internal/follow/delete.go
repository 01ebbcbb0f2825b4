package follow

import (
	"context"
	"fmt"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// Delete deletes a follower's session on its owner, which deletes the agent's copy there. With the owner
// gone, the session is removed as a close removes it, and the agent's copy stays.
func (r Runner) Delete(ctx context.Context, who principal.Principal, reason string) (core.AgentDeletion, error) {
	s := r.f.s
	c := core.ControlOf(s)
	c.Lock()
	node := r.f.node
	st, _ := c.StatusLocked()
	c.Unlock()
	if (st == store.StatusFailed || st == store.StatusDetached) && !r.f.host.LiveNode(node) {
		if err := r.removeForGoneOwner(who, reason); err != nil {
			return core.AgentDeletion{}, err
		}
		return core.AgentDeletion{Status: core.AgentDeleteError, Detail: fmt.Sprintf("node %q, which ran the agent, is not live", node)}, nil
	}
	var d core.AgentDeletion
	cfg := r.f.cfg // the close, then an agent start and its answer
	bound := cfg.CancelGrace + 6*cfg.StopGrace + cfg.DirWrite + cfg.StartBound() + cfg.CallTimeout
	err := r.route(context.WithoutCancel(ctx), OpClose, who, CloseArgs{Reason: reason, Delete: true}, bound, &d)
	return d, err
}
