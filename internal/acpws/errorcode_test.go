package acpws

import (
	"errors"
	"fmt"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	acp "github.com/coder/acp-go-sdk"
)

// TestErrorCodesMapLikeTheOriginal: every sentinel (bare and wrapped) and agent error that crosses a process
// as sessionerr.ErrorCode/ErrorMessage answers `/acp` with the same JSON-RPC error as the original.
func TestErrorCodesMapLikeTheOriginal(t *testing.T) {
	var errs []error
	for _, sc := range sessionerr.SentinelCodes() {
		errs = append(errs, sc.Err, fmt.Errorf("%w: agent exited with status 3", sc.Err))
	}
	errs = append(errs,
		&sessionerr.AgentError{Op: "session/set_mode", Err: &acp.RequestError{Code: -32602, Message: "Invalid params", Data: map[string]any{"modeId": "x"}}},
		&sessionerr.AgentError{Op: "session/new", Err: &acp.RequestError{Code: -32603, Message: "Internal error", Data: "no key"}},
		&sessionerr.AgentError{Op: "session/new", Err: errors.New("agent did not answer within 30s"), Stderr: "boom"},
		errors.New("something internal"),
		&sessionerr.LoginRequiredError{Agent: "ta", AuthMethods: []byte(`[{"id":"k","name":"Key","type":"env_var","vars":[{"name":"K"}]}]`),
			Err: &sessionerr.AgentError{Op: "session/new", Err: &acp.RequestError{Code: -32000, Message: "Authentication required"}}},
	)
	id := []byte(`7`)
	for _, err := range errs {
		back := sessionerr.ErrorFromCode(sessionerr.ErrorCode(err), sessionerr.ErrorMessage(err))
		if got, want := reply(id, back), reply(id, err); got != want {
			t.Errorf("%v: after the round trip\n%s\nwant\n%s", err, got, want)
		}
	}
}

// TestNotResumableRPCError: /acp answers a session that cannot be re-attached with a stable -32603.
func TestNotResumableRPCError(t *testing.T) {
	code, msg, _ := rpcErrorOf(fmt.Errorf("session/load: %w", sessionerr.ErrNotResumable))
	if code != jsonrpc.Internal || msg != "Internal error: session is not resumable" {
		t.Fatalf("ErrNotResumable maps to %d %q", code, msg)
	}
}

// reply is the error response a client gets for err.
func reply(id []byte, err error) string {
	code, msg, data := rpcErrorOf(err)
	return string(rpcError(id, code, msg, data))
}

// TestLoginRequiredRPCError: an agent's auth_required reaches an /acp client as ACP's -32000 with the agent
// and its authMethods in data, whatever data the agent's own error carried.
func TestLoginRequiredRPCError(t *testing.T) {
	methods := []byte(`[{"id":"agent-login","name":"Log in"}]`)
	err := &sessionerr.LoginRequiredError{Agent: "ta", AuthMethods: methods,
		Err: &sessionerr.AgentError{Op: "session/new", Err: &acp.RequestError{Code: -32000, Message: "Authentication required", Data: "no key"}}}
	got := reply([]byte(`3`), fmt.Errorf("create: %w", err))
	want := `{"error":{"code":-32000,"data":{"agent":"ta","authMethods":[{"id":"agent-login","name":"Log in"}],"code":"agent_login_required"},"message":"Authentication required"},"id":3,"jsonrpc":"2.0"}`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
