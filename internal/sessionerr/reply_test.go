package sessionerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/store"
)

// replyTrip sends err through a Reply as JSON, as a routed command's reply travels.
func replyTrip(t *testing.T, err error) error {
	t.Helper()
	b, merr := json.Marshal(ReplyTo(nil, 7, err))
	if merr != nil {
		t.Fatal(merr)
	}
	var r store.Reply
	if uerr := json.Unmarshal(b, &r); uerr != nil {
		t.Fatal(uerr)
	}
	if r.Head != 7 {
		t.Fatalf("head %d came back as %d", 7, r.Head)
	}
	return ReplyErr(r.Error)
}

// TestReplyErrorRoundTrip: every sentinel, bare and wrapped, comes back from a reply's JSON as the same
// sentinel with the same text and code.
func TestReplyErrorRoundTrip(t *testing.T) {
	for _, sc := range SentinelCodes() {
		for _, err := range []error{sc.Err, fmt.Errorf("%w: agent exited with status 3", sc.Err)} {
			back := replyTrip(t, err)
			if !errors.Is(back, sc.Err) || back.Error() != err.Error() || ErrorCode(back) != sc.Code {
				t.Fatalf("%q: %v came back as %v (code %q)", sc.Code, err, back, ErrorCode(back))
			}
		}
	}
	if back := replyTrip(t, errors.New("disk full")); back.Error() != "disk full" || ErrorCode(back) != CodeInternal {
		t.Fatalf("an internal error came back as %v (%q)", back, ErrorCode(back))
	}
	if back := replyTrip(t, nil); back != nil {
		t.Fatalf("no error came back as %v", back)
	}
}

// TestReplyTurnRunningRoundTrip: a turn_running from the owner names its turn and who started it on the node
// that routed the prompt too.
func TestReplyTurnRunningRoundTrip(t *testing.T) {
	err := &TurnRunningError{TurnID: "t1", StartedBy: &principal.Ref{Principal: "ann", Name: "Ann"}}
	back := replyTrip(t, err)
	var tre *TurnRunningError
	if !errors.As(back, &tre) || !errors.Is(back, ErrTurnRunning) || tre.TurnID != "t1" || tre.StartedBy == nil || *tre.StartedBy != *err.StartedBy || back.Error() != err.Error() {
		t.Fatalf("%v came back as %#v", err, back)
	}
}

// TestReplyAgentErrorRoundTrip: an *AgentError keeps its op, text, stderr and the agent's JSON-RPC error, and
// the reply carries them as a structure (op, code, message, data), not as an opaque string.
func TestReplyAgentErrorRoundTrip(t *testing.T) {
	for name, ae := range agentErrorSamples() {
		t.Run(name, func(t *testing.T) {
			re := NewReplyError(fmt.Errorf("prompt: %w", ae))
			var want *acp.RequestError
			hasRPC := errors.As(ae, &want)
			if re.Code != CodeAgentError || re.Agent == nil || re.Agent.Op != ae.Op || re.Agent.RPC != hasRPC {
				t.Fatalf("reply error %+v for %v", re, ae)
			}
			if hasRPC && (re.Agent.Code != want.Code || re.Agent.Message != want.Message) {
				t.Fatalf("agent fault %+v, want code %d message %q", re.Agent, want.Code, want.Message)
			}
			back := replyTrip(t, ae)
			var got *AgentError
			if !errors.As(back, &got) {
				t.Fatalf("%v came back as %T %v", ae, back, back)
			}
			if got.Op != ae.Op || got.Error() != ae.Error() || got.Stderr != ae.Stderr {
				t.Fatalf("came back as %+v: %q, want %q", got, got.Error(), ae.Error())
			}
			var have *acp.RequestError
			if errors.As(back, &have) != hasRPC {
				t.Fatalf("JSON-RPC error lost or invented: %v vs %v", want, have)
			}
			if hasRPC && (want.Code != have.Code || want.Message != have.Message || agenterr.Data(want.Data) != agenterr.Data(have.Data)) {
				t.Fatalf("JSON-RPC error %+v came back as %+v", want, have)
			}
			if ErrorMessage(back) != ErrorMessage(ae) {
				t.Fatalf("message changed on the trip:\n%s\n%s", ErrorMessage(ae), ErrorMessage(back))
			}
		})
	}
}

// TestReplyToResult: a result is marshalled once; one that cannot be is an internal error, not a silent null.
func TestReplyToResult(t *testing.T) {
	r := ReplyTo(map[string]string{"turnId": "t1"}, 3, nil)
	if string(r.Result) != `{"turnId":"t1"}` || r.Head != 3 || r.Error != nil {
		t.Fatalf("reply %+v", r)
	}
	if r := ReplyTo(func() {}, 3, nil); r.Error == nil || r.Error.Code != CodeInternal {
		t.Fatalf("an unmarshallable result gave %+v", r)
	}
}
