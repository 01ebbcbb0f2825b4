package sessions

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// These tests run the demo agent in process inside a synctest bubble (see permission_delivery_test.go): the
// agent's pauses pass in fake time, and the bubble fails a test that leaves a goroutine behind — a waiter
// included.

const twDelay = time.Second

// twSession is a session of the demo agent pausing delay between its steps.
func twSession(t *testing.T, delay time.Duration, policy string) *Session {
	t.Helper()
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{Delay: delay}, in, out)
	}}
	r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}, []agents.Spec{spec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	return dlSession(t, r, policy)
}

type twResult struct {
	st  TurnState
	err error
}

// twAwait starts AwaitTurn on its own goroutine.
func twAwait(ctx context.Context, s *Session, turn *Turn) <-chan twResult {
	ch := make(chan twResult, 1)
	go func() {
		st, err := s.AwaitTurn(ctx, turn)
		ch <- twResult{st, err}
	}()
	return ch
}

func twStarted(t *testing.T, s *Session, text string) *Turn {
	t.Helper()
	turn, err := s.Prompt(dlPrompt(text))
	if err != nil {
		t.Fatal(err)
	}
	return turn
}

// A request made before the wait starts stops it at once; after the answer the wait runs to the turn's end.
func TestAwaitTurnPermissionAskedBeforeWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := twSession(t, 0, PolicyAsk)
		defer s.Close("test over")
		turn := twStarted(t, s, "edit something")
		p := dlPendingOne(t, s)
		st, err := s.AwaitTurn(context.Background(), turn)
		if err != nil || st.Status != TurnAwaitingPermission || len(st.Permissions) != 1 || st.Permissions[0].ID != p.ID ||
			st.TurnID != turn.ID || st.StopReason != "" || st.Text != "You said: edit something" || len(st.Permissions[0].Options) != 3 {
			t.Fatalf("wait with a pending request: %v %+v", err, st)
		}
		if _, got, err := s.AnswerInTurn(p.ID, dlSelect("allow-once"), "rest"); err != nil || got != turn {
			t.Fatalf("answer: %v, turn %v", err, got)
		}
		st, err = s.AwaitTurn(context.Background(), turn)
		if err != nil || st.Status != TurnEnded || st.StopReason != "end_turn" || st.Text != "You said: edit something"+demo.ClosingApplied || len(st.Permissions) != 0 {
			t.Fatalf("wait after the answer: %v %+v", err, st)
		}
	})
}

// A wait that started while the turn ran is woken by the request the agent makes later.
func TestAwaitTurnWakesWhenAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := twSession(t, twDelay, PolicyAsk)
		defer s.Close("test over")
		turn := twStarted(t, s, "edit something")
		res := twAwait(context.Background(), s, turn)
		synctest.Wait() // the waiter and the pausing agent are both blocked
		select {
		case r := <-res:
			t.Fatalf("wait returned before any request: %+v", r)
		default:
		}
		if n := len(s.PendingPermissions()); n != 0 {
			t.Fatalf("%d pending requests before the agent asked", n)
		}
		r := <-res // fake time runs the agent up to its request
		if r.err != nil || r.st.Status != TurnAwaitingPermission || len(r.st.Permissions) != 1 {
			t.Fatalf("wait: %v %+v", r.err, r.st)
		}
		if _, err := s.Cancel(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-turn.Done()
	})
}

// Another client's answer while this one looks away: the next wait does not stop on the resolved request.
func TestAwaitTurnAnsweredByAnotherClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := twSession(t, 0, PolicyAsk)
		defer s.Close("test over")
		turn := twStarted(t, s, "edit something")
		st, _ := s.AwaitTurn(context.Background(), turn)
		if st.Status != TurnAwaitingPermission {
			t.Fatalf("first wait %+v", st)
		}
		if _, err := s.Answer(st.Permissions[0].ID, dlSelect("reject-once"), "client"); err != nil {
			t.Fatal(err)
		}
		st, err := s.AwaitTurn(context.Background(), turn)
		if err != nil || st.Status != TurnEnded || st.Text != "You said: edit something"+demo.ClosingNotApplied {
			t.Fatalf("wait after another client's answer: %v %+v", err, st)
		}
		if _, _, err := s.AnswerInTurn(st.TurnID, dlSelect("allow-once"), "rest"); !errors.Is(err, sessionerr.ErrPermissionUnknown) {
			t.Fatalf("answer with a turn id: %v", err)
		}
	})
}

// A turn that ends while a client waits (here: cancelled) wakes it with the result.
func TestAwaitTurnEndsWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := twSession(t, twDelay, PolicyAsk)
		defer s.Close("test over")
		turn := twStarted(t, s, "edit something")
		res := twAwait(context.Background(), s, turn)
		synctest.Wait()
		if _, err := s.Cancel(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := <-res
		if r.err != nil || r.st.Status != TurnEnded || r.st.StopReason != "cancelled" {
			t.Fatalf("wait: %v %+v", r.err, r.st)
		}
		if l, err := s.LatestTurn(); err != nil || l != turn {
			t.Fatalf("latest turn after the end: %v %v", l, err)
		}
	})
}

// The wait's bound passes while the turn runs: it reports running, and the turn goes on to its request.
func TestAwaitTurnTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := twSession(t, twDelay, PolicyAsk)
		defer s.Close("test over")
		if _, err := s.LatestTurn(); !errors.Is(err, sessionerr.ErrNoTurnYet) {
			t.Fatalf("latest turn before any: %v", err)
		}
		turn := twStarted(t, s, "edit something")
		ctx, cancel := context.WithTimeout(context.Background(), twDelay/2)
		defer cancel()
		st, err := s.AwaitTurn(ctx, turn)
		if !errors.Is(err, context.DeadlineExceeded) || st.Status != TurnRunning || st.TurnID != turn.ID {
			t.Fatalf("timed-out wait: %v %+v", err, st)
		}
		st, err = s.AwaitTurn(context.Background(), turn)
		if err != nil || st.Status != TurnAwaitingPermission {
			t.Fatalf("the turn did not go on: %v %+v", err, st)
		}
		_, _ = s.Cancel(context.Background())
		<-turn.Done()
	})
}

// A client that goes away (its context cancelled) leaves no waiter behind; the bubble checks.
func TestAwaitTurnClientGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := twSession(t, twDelay, PolicyAsk)
		defer s.Close("test over")
		turn := twStarted(t, s, "edit something")
		ctx, cancel := context.WithCancel(context.Background())
		res := twAwait(ctx, s, turn)
		synctest.Wait()
		cancel()
		if r := <-res; !errors.Is(r.err, context.Canceled) || r.st.Status != TurnRunning {
			t.Fatalf("wait of a gone client: %v %+v", r.err, r.st)
		}
		_, _ = s.Cancel(context.Background())
		<-turn.Done()
	})
}

// Requests the policy answers never stop a wait.
func TestAwaitTurnPolicyNeverStops(t *testing.T) {
	for _, policy := range []string{PolicyApproveAll, PolicyDenyAll} {
		t.Run(policy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := twSession(t, twDelay, policy)
				defer s.Close("test over")
				turn := twStarted(t, s, "edit something")
				st, err := s.AwaitTurn(context.Background(), turn)
				if err != nil || st.Status != TurnEnded || st.StopReason != "end_turn" {
					t.Fatalf("wait: %v %+v", err, st)
				}
				if len(dlResolved(dlLog(t, s))) != 1 {
					t.Fatal("the agent asked nothing: the test proves nothing")
				}
			})
		})
	}
}

// A request that was asked and resolved (by another client, a WebSocket, the deadline) before the waiter looked
// leaves nothing for the user: the waiter goes back to waiting instead of reporting an empty question.
func TestAwaitTurnRequestGoneBeforeTheWaiterLooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := twSession(t, twDelay, PolicyAsk)
		defer s.Close("test over")
		turn := twStarted(t, s, "edit something")
		res := twAwait(context.Background(), s, turn)
		synctest.Wait()
		core.ControlOf(s).Lock()
		turn.NotifyAsked() // the wake of a request that is no longer pending when the waiter looks
		core.ControlOf(s).Unlock()
		synctest.Wait()
		select {
		case r := <-res:
			t.Fatalf("wait returned on a request that was already gone: %+v", r)
		default:
		}
		r := <-res // the agent's real request, in fake time
		if r.err != nil || r.st.Status != TurnAwaitingPermission || len(r.st.Permissions) != 1 {
			t.Fatalf("wait: %v %+v", r.err, r.st)
		}
		_, _ = s.Cancel(context.Background())
		<-turn.Done()
	})
}
