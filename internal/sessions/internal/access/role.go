package access

import (
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/store"
)

// RoleOf names p's role in a session owned by owner and shared as shares say: owner, admin, collaborator or
// viewer; "" when p may not see it.
func RoleOf(owner string, shares *Shares, p principal.Principal) string {
	switch {
	case owner != "" && owner == p.ID:
		return "owner"
	case p.IsAdmin():
		return "admin"
	}
	switch Of(owner, shares, p) {
	case Act:
		return string(store.ShareCollaborator)
	case View:
		return string(store.ShareViewer)
	}
	return ""
}
