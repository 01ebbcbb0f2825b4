package fold

import (
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/store"
)

// DecideCopiedRequest decides whether the request a copy just folded at seq waits for a user there. The owner
// answers some at once, under the lock that logged them (the session's policy, or no running turn): they are
// never pending there, so they must not be here in the moment before their resolved frame arrives. One that
// waits for a user wakes the REST waiters of its turn, as on the owner.
func (st *State) DecideCopiedRequest(seq uint64, policy string) {
	p := st.Perms.AtSeq(seq)
	if p == nil {
		return
	}
	if _, byPolicy := pending.ByPolicy(policy, p.Req); byPolicy && p.Elicit == nil || st.Turn == nil || st.Status != store.StatusRunning {
		st.Perms.Drop(p.ID) // its resolved frame is the owner's next frame
		return
	}
	st.Turn.NotifyAsked()
}
