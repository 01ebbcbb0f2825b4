package pending

import (
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// Permission policies a session may choose. Every automatic answer is logged like a client's, so clients can
// audit what was approved on their behalf.
const (
	PolicyAsk          = "ask"           // every request waits for a client (default)
	PolicyApproveReads = "approve-reads" // read-only kinds (read, search, fetch, think) are allowed at once
	PolicyApproveAll   = "approve-all"   // everything is allowed at once
	PolicyDenyAll      = "deny-all"      // everything is denied at once
)

// Policies lists the valid policies.
var Policies = []string{PolicyAsk, PolicyApproveReads, PolicyApproveAll, PolicyDenyAll}

// ValidPolicy reports whether p names a policy.
func ValidPolicy(p string) bool {
	for _, v := range Policies {
		if p == v {
			return true
		}
	}
	return false
}

// ByPolicy returns the automatic outcome for a request, or ok=false when a client must answer. It
// chooses options by kind, never by id.
func ByPolicy(policy string, req ask.PermissionRequest) (ask.Outcome, bool) {
	switch policy {
	case PolicyApproveAll:
		return req.Allow()
	case PolicyDenyAll:
		return req.Deny("policy deny-all"), true
	case PolicyApproveReads:
		var tc struct {
			Kind string `json:"kind"`
		}
		_ = json.Unmarshal(req.ToolCall, &tc) // no readable kind: not a read, so a user decides
		switch tc.Kind {
		case "read", "search", "fetch", "think":
			return req.Allow()
		}
	}
	return ask.Outcome{}, false
}
