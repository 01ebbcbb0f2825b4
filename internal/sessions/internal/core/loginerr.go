package core

import (
	"github.com/acp-gateway/gateway/internal/agentlogin"
	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// LoginRequired turns a session's failure to open into a LoginRequiredError when the agent answered
// auth_required (raw is the agent call's own error), naming the methods its initialize offered.
func (c Control) LoginRequired(raw, failed error) error {
	s := c.s
	if !sessionerr.IsAuthRequired(raw) {
		return failed
	}
	s.mu.Lock()
	methods := s.agent.AuthMethods
	s.mu.Unlock()
	return &sessionerr.LoginRequiredError{Agent: s.Agent, AuthMethods: agentlogin.MethodsArray(methods), Err: failed}
}
