package principal

import (
	"errors"
	"strings"
	"unicode"
)

// Principal ids live in one namespace per source, so that no source can name a principal of another:
//
//   - local names, the users file's entries and the users a trusted proxy names: the bare name. These two are
//     one namespace on purpose (the users file gives roles to the users a proxy names). A local name never
//     holds ':' and is never a built-in id;
//   - OIDC: OIDCPrefix + the id claim (any characters);
//   - built-ins: TokenAdmin ("admin", the single --token) and Anonymous ("anonymous", no authentication).
//
// Ids with ':' thus belong to prefixed sources only. The ids stay what they were before, so the owners and
// shares a data dir stored keep their meaning.

// OIDCPrefix starts the id of every principal an OIDC token names.
const OIDCPrefix = "oidc:"

// CheckLocalName says why name cannot be a users-file entry or a user a trusted proxy names; nil when it can.
func CheckLocalName(name string) error {
	switch {
	case name == "" || len(name) > 128:
		return errors.New("a name is 1-128 characters")
	case strings.ContainsRune(name, ':'):
		return errors.New("a name must not hold ':' (ids with ':' belong to other sources, as oidc:<subject>)")
	case name == TokenAdmin.ID || name == Anonymous.ID:
		return errors.New("a name must not be " + TokenAdmin.ID + " or " + Anonymous.ID + " (the single token's and the unauthenticated caller's ids)")
	case strings.ContainsRune(name, '/'):
		return errors.New("a name must not hold '/'")
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return errors.New("a name must not hold spaces or control characters")
		}
	}
	return nil
}
