package sessionerr

import (
	"errors"
	"io/fs"
	"os/exec"
)

// AgentError is an agent failing a gateway request (initialize, session/new, set_mode, …): the agent's own
// JSON-RPC error, or a timeout, with the tail of its stderr for the operator.
type AgentError struct {
	Op     string
	Err    error
	Stderr string
}

func (e *AgentError) Error() string {
	if e.Stderr != "" {
		return e.Op + ": " + e.Err.Error() + " (the agent's stderr is in the gateway log)"
	}
	return e.Op + ": " + e.Err.Error()
}
func (e *AgentError) Unwrap() error { return e.Err }

// IsStartFailure reports whether err is an agent's process failing to start (an exec or file system error).
// Its text names the gateway's own paths: faces log it and show clients only the agent's name.
func IsStartFailure(err error) bool {
	var execErr *exec.Error
	var pathErr *fs.PathError
	var wireErr *wireError // the same failure on the owner of a routed command (docs/cluster.md §5)
	return errors.As(err, &execErr) || errors.As(err, &pathErr) || errors.As(err, &wireErr) && wireErr.start
}
