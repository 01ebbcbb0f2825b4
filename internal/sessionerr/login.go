package sessionerr

import (
	"encoding/json"
	"errors"

	acp "github.com/coder/acp-go-sdk"
)

// CodeAuthRequired is ACP's auth_required: an agent's answer to session/new (load, resume) when it needs
// its user logged in first.
const CodeAuthRequired = -32000

// Errors of agent login.
var (
	// ErrLoginRequired is an agent answering auth_required when a session opens: the caller logs in with
	// one of LoginRequiredError.AuthMethods and tries again.
	ErrLoginRequired = errors.New("agent login required")
	// ErrUnknownLoginMethod names an auth method the agent does not offer, or one of another type.
	ErrUnknownLoginMethod = errors.New("unknown login method")
	// ErrInvalidLoginVars is an env_var login whose variables do not match the method's: unknown names,
	// missing required ones, or unusable values.
	ErrInvalidLoginVars = errors.New("invalid login variables")
)

// LoginRequiredError is ErrLoginRequired with what a client needs to log in: the agent and its authMethods
// as the agent described them. It is also the agent's *AgentError (errors.As finds both).
type LoginRequiredError struct {
	Agent       string
	AuthMethods json.RawMessage // a JSON array, never null
	Err         error           // the agent's failure (an *AgentError on this node)
}

func (e *LoginRequiredError) Error() string {
	return "agent " + e.Agent + " requires login: " + e.Err.Error()
}

// Unwrap lets errors.Is find ErrLoginRequired and errors.As the agent's error.
func (e *LoginRequiredError) Unwrap() []error { return []error{ErrLoginRequired, e.Err} }

// IsAuthRequired reports whether err is the agent's auth_required answer.
func IsAuthRequired(err error) bool {
	var re *acp.RequestError
	return errors.As(err, &re) && re.Code == CodeAuthRequired
}

// loginWire is a LoginRequiredError as ErrorMessage encodes it for a routed command.
type loginWire struct {
	Agent       string          `json:"agent"`
	AuthMethods json.RawMessage `json:"authMethods"`
	Message     string          `json:"message"`
}
