package agents

import (
	"errors"
	"os/exec"
)

// ErrCommandNotFound is an external agent whose command is not on the gateway's PATH (or, given as a path,
// is not an executable file). It says nothing of the command: clients never see an agent's command line.
var ErrCommandNotFound = errors.New("its command was not found on the gateway's PATH")

// CheckCommand reports whether the spec's command can be started, looked up as agents are started (the
// gateway's PATH), so a missing binary is reported at start and in the agent list rather than as a failure
// on first use. Built-in agents are always available.
func CheckCommand(s Spec) error {
	if s.Command == "" || s.Kind == KindBuiltin {
		return nil
	}
	if _, err := exec.LookPath(s.Command); err != nil {
		return ErrCommandNotFound
	}
	return nil
}
