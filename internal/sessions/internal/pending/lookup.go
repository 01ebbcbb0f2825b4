package pending

import "github.com/acp-gateway/gateway/internal/sessionerr"

// Lookup is the pending request id, for an answer to a permission or, with forElicitation, an elicitation.
// A request no longer pending is ErrAlreadyResolved while the table remembers it, else unknown.
func (t *Table) Lookup(id string, forElicitation bool) (*Request, error) {
	if p, ok := t.Get(id); ok {
		return p, nil
	}
	switch {
	case t.WasResolved(id):
		return nil, sessionerr.ErrAlreadyResolved
	case forElicitation:
		return nil, sessionerr.ErrElicitationUnknown
	}
	return nil, sessionerr.ErrPermissionUnknown
}
