package demo

import (
	"fmt"
	"strings"

	"github.com/coder/acp-go-sdk"
)

// permissionOptions are offered for the edit, one of each common kind.
func permissionOptions() []acp.PermissionOption {
	return []acp.PermissionOption{
		{OptionId: "allow-once", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
		{OptionId: "allow-always", Name: "Always allow", Kind: acp.PermissionOptionKindAllowAlways},
		{OptionId: "reject-once", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
	}
}

// verdict is what the agent makes of a permission answer.
type verdict struct {
	allowed   bool
	cancelled bool   // The turn was cancelled; end it without further updates.
	reason    string // Why the edit was not applied; empty when allowed.
}

// judge interprets the answer to session/request_permission. Only the
// explicit selection of an offered allow_* option allows; everything else
// denies, mirroring the gateway's default-deny rule.
func judge(offered []acp.PermissionOption, resp acp.RequestPermissionResponse, err error) verdict {
	switch {
	case err != nil:
		return verdict{reason: fmt.Sprintf("permission request failed: %v", err)}
	case resp.Outcome.Cancelled != nil:
		return verdict{cancelled: true, reason: "cancelled"}
	case resp.Outcome.Selected == nil:
		return verdict{reason: "no outcome"}
	}
	id := resp.Outcome.Selected.OptionId
	for _, o := range offered {
		if o.OptionId != id {
			continue
		}
		if strings.HasPrefix(string(o.Kind), "allow_") {
			return verdict{allowed: true}
		}
		return verdict{reason: "rejected by the user"}
	}
	return verdict{reason: fmt.Sprintf("unknown option %q", id)}
}
