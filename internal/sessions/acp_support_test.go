package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/translate/ask"
	acp "github.com/coder/acp-go-sdk"
)

func TestPermissionPending(t *testing.T) {
	r := demoRegistry(t, Config{})
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.PermissionPending("nope") {
		t.Fatal("unknown id reported pending")
	}
	turn, err := s.Prompt(textPrompt("needs a permission"))
	if err != nil {
		t.Fatal(err)
	}
	p := waitPending(t, s)
	if !s.PermissionPending(p.ID) {
		t.Fatalf("%s not pending", p.ID)
	}
	var a ask.ClientAnswer
	a.Outcome.Outcome, a.Outcome.OptionID = "selected", "allow-once"
	if _, err := s.Answer(p.ID, a, "acp"); err != nil {
		t.Fatal(err)
	}
	if s.PermissionPending(p.ID) {
		t.Fatal("still pending after the answer")
	}
	<-turn.Done()
}

func TestAuthenticateForwardsTheAgentsError(t *testing.T) {
	r := demoRegistry(t, Config{})
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The demo agent has no auth methods and answers authenticate with -32602.
	_, err = s.Authenticate(context.Background(), json.RawMessage(`{"methodId":"x"}`))
	var re *acp.RequestError
	if !errors.As(err, &re) || re.Code != -32602 {
		t.Fatalf("authenticate: %v", err)
	}
	if m := s.AgentAuthMethods(); string(m) != "[]" {
		t.Fatalf("auth methods = %s", m)
	}
	s.Close("test")
	if _, err := s.Authenticate(context.Background(), json.RawMessage(`{"methodId":"x"}`)); !errors.Is(err, sessionerr.ErrClosed) {
		t.Fatalf("authenticate on a closed session: %v", err)
	}
}
