package agentlogin

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/acp-gateway/gateway/internal/agents"
)

// Login secrets: the values of the login variables an agent was started with are kept out of everything the
// gateway logs, stores or shows, wherever the agent might repeat them.

// SecretsOf returns the values of env ("NAME=value") that Scrub removes from what an agent says back. Every
// value counts, secret or not: none is ever shown again.
func SecretsOf(env []string) []string {
	var out []string
	for _, kv := range env {
		if _, val, ok := strings.Cut(kv, "="); ok && len(val) >= MinSecretBytes {
			out = append(out, val)
		}
	}
	return out
}

// MinSecretBytes is agents' shortest value treated as a secret: shorter ones would blank out common words.
const MinSecretBytes = 4

// redacted replaces a login secret an agent quotes in what it sends (a tool that ran `env`).
var redacted = []byte("[REDACTED]")

// ScrubParams replaces the session's login secrets in an update's params, which the log, the store and
// every client would otherwise keep: the agent holds them as environment, and its tools may print them. A
// replacement that would break the JSON (a secret that spans JSON syntax) is not made. params is returned
// as it is when it holds no secret, at the cost of one scan per secret.
func ScrubParams(params json.RawMessage, secrets []string) json.RawMessage {
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

// ScrubErr is err with the given secrets removed from its text; an error that quoted one becomes text (its
// JSON-RPC code is lost, as the session core's scrub of MCP secrets does).
func ScrubErr(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	if msg, found := agents.Scrub(err.Error(), secrets); found {
		return errors.New(msg)
	}
	return err
}
