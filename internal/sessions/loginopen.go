package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/acp-gateway/gateway/internal/agents"
	acp "github.com/coder/acp-go-sdk"
)

// openAgentSession sends session/new (load, resume: dropReplay) to a freshly started agent. When the agent
// answers auth_required and the session's principal logged it in with an agent method before (login.go),
// that authenticate is sent again on this process and the request retried once: agents whose login lives
// in their process, not on disk, then open sessions as they did right after the login.
func (s *Session) openAgentSession(ctx context.Context, conn *agents.Conn, method string, params any, dropReplay bool) (json.RawMessage, error) {
	call := conn.Call
	if dropReplay {
		call = conn.CallDroppingUpdates
	}
	res, err := call(ctx, method, params)
	if err == nil || !isAuthRequired(err) {
		return res, err
	}
	m := s.reg.logins.agentMethod(s.spec, s.Owner)
	if m == "" || m == s.spec.AuthMethod {
		return res, err
	}
	if _, aerr := conn.Call(ctx, acp.AgentMethodAuthenticate, map[string]any{"methodId": m}); aerr != nil {
		s.logger.Info("remembered agent login refused", "method", m, "err", scrubErr(cleanAgentError(aerr), s.agentSecrets()))
		return res, err
	}
	return call(ctx, method, params)
}

// agentSecrets are the values scrubbed from what the session's agent says back: its MCP servers' env and
// headers, and the login variables it was started with.
func (s *Session) agentSecrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agentSecretsLocked()
}

func (s *Session) agentSecretsLocked() []string {
	return append(agents.MCPSecrets(s.mcpServers()), s.loginSecrets...)
}

// redacted replaces a login secret an agent quotes in what it sends (a tool that ran `env`).
var redacted = []byte("[REDACTED]")

// scrubLoginSecrets replaces the session's login secrets in an update's params, which the log, the store and
// every client would otherwise keep: the agent holds them as environment, and its tools may print them. A
// replacement that would break the JSON (a secret that spans JSON syntax) is not made. params is returned
// as it is when it holds no secret, at the cost of one scan per secret.
func scrubLoginSecrets(params json.RawMessage, secrets []string) json.RawMessage {
	for _, sec := range secrets {
		if !bytes.Contains(params, []byte(sec)) {
			continue
		}
		if out := bytes.ReplaceAll(params, []byte(sec), redacted); json.Valid(out) {
			params = out
		}
	}
	return params
}

// scrubErr is err with the given secrets removed from its text; an error that quoted one becomes text (its
// JSON-RPC code is lost, as scrubMCPSecrets does).
func scrubErr(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	if msg, found := agents.Scrub(err.Error(), secrets); found {
		return errors.New(msg)
	}
	return err
}
