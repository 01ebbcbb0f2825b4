package sessionerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agenterr"
	acp "github.com/coder/acp-go-sdk"
)

// TestErrorCodeRoundTrip: every sentinel, bare and wrapped with a reason, comes back from its code and
// message with errors.Is intact and the same text; codes are distinct.
func TestErrorCodeRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range SentinelCodes() {
		if seen[sc.Code] {
			t.Fatalf("code %q used twice", sc.Code)
		}
		seen[sc.Code] = true
		for _, err := range []error{sc.Err, fmt.Errorf("%w: agent exited with status 3", sc.Err)} {
			code, msg := ErrorCode(err), ErrorMessage(err)
			if code != sc.Code {
				t.Fatalf("ErrorCode(%v) = %q, want %q", err, code, sc.Code)
			}
			back := ErrorFromCode(code, msg)
			if !errors.Is(back, sc.Err) || back.Error() != err.Error() || ErrorCode(back) != code {
				t.Fatalf("%q: %v came back as %v (code %q)", sc.Code, err, back, ErrorCode(back))
			}
		}
	}
	for _, code := range []string{"", "internal", "no_such_code"} {
		if err := ErrorFromCode(code, "boom"); err.Error() != "boom" || ErrorCode(err) != CodeInternal {
			t.Fatalf("ErrorFromCode(%q) = %v (%q)", code, err, ErrorCode(err))
		}
	}
}

// TestAgentErrorCodeRoundTrip: an *AgentError keeps its op, text, stderr and the agent's JSON-RPC error.
func TestAgentErrorCodeRoundTrip(t *testing.T) {
	for name, ae := range agentErrorSamples() {
		t.Run(name, func(t *testing.T) {
			back := ErrorFromCode(ErrorCode(ae), ErrorMessage(ae))
			var got *AgentError
			if ErrorCode(ae) != CodeAgentError || !errors.As(back, &got) {
				t.Fatalf("%v came back as %T %v", ae, back, back)
			}
			if got.Op != ae.Op || got.Error() != ae.Error() || got.Stderr != ae.Stderr {
				t.Fatalf("came back as %+v: %q, want %q", got, got.Error(), ae.Error())
			}
			var want, have *acp.RequestError
			if errors.As(ae, &want) != errors.As(back, &have) {
				t.Fatalf("JSON-RPC error lost or invented: %v vs %v", want, have)
			}
			if want != nil && (want.Code != have.Code || want.Message != have.Message || agenterr.Data(want.Data) != agenterr.Data(have.Data)) {
				t.Fatalf("JSON-RPC error %+v came back as %+v", want, have)
			}
			if ErrorMessage(back) != ErrorMessage(ae) {
				t.Fatalf("message changed on the second trip:\n%s\n%s", ErrorMessage(ae), ErrorMessage(back))
			}
		})
	}
}

func agentErrorSamples() map[string]*AgentError {
	return map[string]*AgentError{
		"rpc with object data": {Op: "session/set_mode", Err: agenterr.Clean(&acp.RequestError{Code: -32602, Message: "Invalid params", Data: map[string]any{"modeId": "nope"}})},
		"rpc with text data":   {Op: "session/new", Err: agenterr.Clean(&acp.RequestError{Code: -32603, Message: "Internal error", Data: "OPENAI_API_KEY is not set"})},
		"rpc without data":     {Op: "initialize", Err: agenterr.Clean(&acp.RequestError{Code: -32000, Message: "auth required"})},
		"timeout with stderr":  {Op: "session/new", Err: errors.New("agent did not answer within 30s"), Stderr: "panic: at /home/x"},
		"authenticate":         {Op: "authenticate api-key", Err: agenterr.Clean(&acp.RequestError{Code: -32000, Message: "bad key"})},
		"rpc with large data":  {Op: "session/set_config_option", Err: agenterr.Clean(&acp.RequestError{Code: -32603, Message: "x", Data: map[string]any{"blob": strings.Repeat("y", 3*agenterr.MaxData)}})},
	}
}
