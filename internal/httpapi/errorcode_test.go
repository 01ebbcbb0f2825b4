package httpapi

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	acp "github.com/coder/acp-go-sdk"
)

// TestErrorCodesMapLikeTheOriginal: every sentinel (bare and wrapped) and agent error that crosses a process
// as sessionerr.ErrorCode/ErrorMessage maps to the same problem as the original, and the sentinel's code is the
// problem's code (no_turn_yet is REST's no_turn, session_detached its session_not_ready).
func TestErrorCodesMapLikeTheOriginal(t *testing.T) {
	restCode := map[string]string{"no_turn_yet": "no_turn", "session_detached": "session_not_ready"}
	var errs []error
	for _, sc := range sessionerr.SentinelCodes() {
		p := toProblem(sc.Err)
		want := sc.Code
		if c, ok := restCode[want]; ok {
			want = c
		}
		if p.Code != want {
			t.Errorf("%v maps to problem %q, its code is %q", sc.Err, p.Code, sc.Code)
		}
		errs = append(errs, sc.Err, fmt.Errorf("%w: agent exited with status 3", sc.Err))
	}
	errs = append(errs,
		&sessionerr.AgentError{Op: "session/set_mode", Err: &acp.RequestError{Code: -32602, Message: "Invalid params", Data: map[string]any{"modeId": "x"}}},
		&sessionerr.AgentError{Op: "session/new", Err: &acp.RequestError{Code: -32603, Message: "Internal error", Data: "no key"}},
		&sessionerr.AgentError{Op: "authenticate api-key", Err: errors.New("agent did not answer within 30s"), Stderr: "boom"},
		errors.New("something internal"),
		&sessionerr.LoginRequiredError{Agent: "ta", AuthMethods: []byte(`[{"id":"k","name":"Key","type":"env_var","vars":[{"name":"K"}]}]`),
			Err: &sessionerr.AgentError{Op: "session/new", Err: &acp.RequestError{Code: -32000, Message: "Authentication required"}}},
	)
	for _, err := range errs {
		back := sessionerr.ErrorFromCode(sessionerr.ErrorCode(err), sessionerr.ErrorMessage(err))
		if got, want := toProblem(back), toProblem(err); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: after the round trip %+v, want %+v", err, got, want)
		}
	}
}

// TestNotResumableProblem: the new sentinel is a 409 with its own code.
func TestNotResumableProblem(t *testing.T) {
	if p := toProblem(fmt.Errorf("re-attach: %w", sessionerr.ErrNotResumable)); p.Status != 409 || p.Code != "session_not_resumable" {
		t.Fatalf("ErrNotResumable maps to %d %q", p.Status, p.Code)
	}
}

// TestDetachedErrorCodeMapsLikeTheOriginal: ErrDetached (a detached session refusing set_mode, …) is not a
// sentinel of its own but a kind of ErrNotReady with its own problem detail; routed as a code and a message
// it still answers as on the owner.
func TestDetachedErrorCodeMapsLikeTheOriginal(t *testing.T) {
	for _, err := range []error{sessionerr.ErrDetached, fmt.Errorf("set_mode: %w", sessionerr.ErrDetached)} {
		back := sessionerr.ErrorFromCode(sessionerr.ErrorCode(err), sessionerr.ErrorMessage(err))
		if got, want := toProblem(back), toProblem(err); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: after the round trip %+v, want %+v", err, got, want)
		}
	}
}
