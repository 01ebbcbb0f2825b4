package agentlogin

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agents"
)

// MaxValue bounds one login variable's value.
const MaxValue = 16 << 10

// AuthMethod is the part of an agent's AuthMethod the gateway interprets.
type AuthMethod struct {
	ID   string `json:"id"`
	Type string `json:"type"` // "" = agent
	Vars []struct {
		Name     string `json:"name"`
		Secret   *bool  `json:"secret"` // ACP: true when absent
		Optional bool   `json:"optional"`
	} `json:"vars"`
}

// VarsError says why a login's variables do not fit their method; the session core reports it as its
// invalid-login-variables error.
type VarsError struct{ msg string }

func (e *VarsError) Error() string { return e.msg }

func varsErrorf(format string, args ...any) error {
	return &VarsError{msg: fmt.Sprintf(format, args...)}
}

// CheckVars checks vars against method m and returns those to keep (empty optional ones dropped); a
// mismatch is a *VarsError.
func CheckVars(m AuthMethod, vars map[string]string) (map[string]string, error) {
	declared := map[string]bool{}
	kept := map[string]string{}
	for _, v := range m.Vars {
		declared[v.Name] = true
		val, given := vars[v.Name]
		if !given || val == "" {
			if !v.Optional {
				return nil, varsErrorf("%s is required by method %q", v.Name, m.ID)
			}
			continue
		}
		if ReservedVar(v.Name) {
			return nil, varsErrorf("%s is set by the gateway, not by a login", v.Name)
		}
		secret := v.Secret == nil || *v.Secret
		switch {
		case len(val) > MaxValue:
			return nil, varsErrorf("the value of %s is over %d bytes", v.Name, MaxValue)
		case !utf8.ValidString(val) || strings.ContainsRune(val, 0):
			return nil, varsErrorf("the value of %s is not text (invalid UTF-8 or a NUL byte)", v.Name)
		case secret && len(val) < MinSecretBytes:
			return nil, varsErrorf("the value of %s is shorter than %d bytes, too short to be kept out of logs", v.Name, MinSecretBytes)
		}
		kept[v.Name] = val
	}
	var unknown []string
	for n := range vars {
		if !declared[n] {
			unknown = append(unknown, agenterr.Clip(n, 64))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, varsErrorf("method %q declares no variable %s", m.ID, strings.Join(unknown, ", "))
	}
	return kept, nil
}

// ReservedVar reports whether name is one the gateway sets itself (or that would change how the
// agent's executable is found or loaded): no login may set it.
func ReservedVar(name string) bool {
	switch name {
	case "", "PATH", "HOME", "TMPDIR", agents.OwnerVar:
		return true
	}
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || strings.ContainsAny(name, "=\x00")
}

// FindAuthMethod finds the method id of the given type ("" = agent) among raw authMethods.
func FindAuthMethod(raw json.RawMessage, id, typ string) (AuthMethod, bool) {
	for _, m := range ParseAuthMethods(raw) {
		if m.ID == id && m.Type == typ {
			return m, true
		}
	}
	return AuthMethod{}, false
}

// ParseAuthMethods decodes what the gateway interprets of an agent's authMethods; entries it cannot read
// are skipped (they still reach clients as the agent sent them).
func ParseAuthMethods(raw json.RawMessage) []AuthMethod {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]AuthMethod, 0, len(list))
	for _, e := range list {
		var m AuthMethod
		if json.Unmarshal(e, &m) == nil {
			if m.Type == "agent" {
				m.Type = ""
			}
			out = append(out, m)
		}
	}
	return out
}

// MethodsArray is an agent's authMethods as a JSON array: [] when it sent none or not an array.
func MethodsArray(raw json.RawMessage) json.RawMessage {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || list == nil {
		return json.RawMessage("[]")
	}
	return raw
}

// AdvertisesLogout reports whether an agent's capabilities hold auth.logout.
func AdvertisesLogout(caps json.RawMessage) bool {
	var c struct {
		Auth struct {
			Logout json.RawMessage `json:"logout"`
		} `json:"auth"`
	}
	return json.Unmarshal(caps, &c) == nil && len(c.Auth.Logout) > 0 && string(c.Auth.Logout) != "null"
}
