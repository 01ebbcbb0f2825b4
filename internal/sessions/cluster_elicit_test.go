package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// TestFollowerRoutesElicitation: an elicitation of a session owned by node a waits on node b too (b folds the
// logged request), and answers given on b reach the owner: content that does not match the schema comes back
// as ErrInvalidElicitationAnswer with its reason, a good answer reaches the (demo) agent.
func TestFollowerRoutesElicitation(t *testing.T) {
	a, b := newCluster(t)
	s, err := a.reg.Create(context.Background(), sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := f.PromptAs(alice, prompt("/ask"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := f.AwaitTurn(ctx, turn)
	if err != nil || st.Status != sessions.TurnAwaitingElicitation || len(st.Elicitations) != 1 || st.Elicitations[0].Mode != "form" {
		t.Fatalf("await on b: %+v, %v", st, err)
	}
	id := st.Elicitations[0].ID
	bad := ask.ClientAnswer{Action: "accept", Content: json.RawMessage(`{"colour":"red"}`), For: "elicitation"}
	if _, _, err := f.AnswerInTurnAs(alice, id, bad, "rest"); !errors.Is(err, sessionerr.ErrInvalidElicitationAnswer) || err.Error() == sessionerr.ErrInvalidElicitationAnswer.Error() {
		t.Fatalf("bad answer through b: %v", err)
	}
	good := ask.ClientAnswer{Action: "accept", Content: json.RawMessage(`{"name":"Ann","colour":"red"}`), For: "elicitation"}
	o, _, err := f.AnswerInTurnAs(alice, id, good, "rest")
	if err != nil || o.Action != "accept" {
		t.Fatalf("answer through b: %+v, %v", o, err)
	}
	st, err = f.AwaitTurn(ctx, turn)
	if err != nil || st.Status != sessions.TurnEnded || st.Text != "You answered: colour=red, name=Ann" {
		t.Fatalf("turn on b: %+v, %v", st, err)
	}
}
