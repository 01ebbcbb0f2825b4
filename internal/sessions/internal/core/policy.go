package core

import "github.com/acp-gateway/gateway/internal/sessions/internal/pending"

// Permission policies a session may choose (package pending decides by them).
const (
	PolicyAsk          = pending.PolicyAsk
	PolicyApproveReads = pending.PolicyApproveReads
	PolicyApproveAll   = pending.PolicyApproveAll
	PolicyDenyAll      = pending.PolicyDenyAll
)

// Policies lists the valid policies.
var Policies = pending.Policies

// ValidPolicy reports whether p names a policy.
func ValidPolicy(p string) bool { return pending.ValidPolicy(p) }
