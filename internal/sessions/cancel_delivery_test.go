package sessions

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	acp "github.com/coder/acp-go-sdk"
)

// stubbornAgent is an in-process ACP agent that opens a tool call and then ignores session/cancel: its
// prompt only ends when the agent itself is killed (its context, which Conn.Kill cancels for built-ins).
type stubbornAgent struct {
	acp.Agent // nil: the gateway calls nothing else
	conn      *acp.AgentSideConnection
	dead      context.Context
}

func (a *stubbornAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *stubbornAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: "stubborn"}, nil
}

func (a *stubbornAgent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *stubbornAgent) Prompt(_ context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	_ = a.conn.SessionUpdate(a.dead, acp.SessionNotification{SessionId: p.SessionId, Update: acp.StartToolCall("stub_1", "Run forever",
		acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress))})
	<-a.dead.Done()
	return acp.PromptResponse{}, a.dead.Err()
}

type gatedReader struct {
	r     io.Reader
	ready <-chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.ready
	return g.r.Read(p)
}

func (g gatedReader) Close() error {
	if c, ok := g.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func stubbornSpec() agents.Spec {
	return agents.Spec{Name: "stubborn", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		a := &stubbornAgent{dead: ctx}
		// Nothing is read before a.conn is set: the SDK's handlers start with the first request.
		ready := make(chan struct{})
		a.conn = acp.NewAgentSideConnection(a, out, gatedReader{in, ready})
		close(ready)
		select {
		case <-a.conn.Done():
		case <-ctx.Done():
		}
		if c, ok := in.(io.Closer); ok {
			c.Close()
		}
		<-a.conn.Done()
		return nil
	}}
}

// TestCancelEscalationInFakeTime: after session/cancel the gateway waits CancelGrace for the agent's answer;
// then the turn ends cancelled, the open tool call is closed failed before turn_ended, the session fails
// with a reason, and nothing is left running (the bubble checks every goroutine ended).
func TestCancelEscalationInFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), CancelGrace: 10 * time.Second},
			[]agents.Spec{stubbornSpec()}, "stubborn")
		if err != nil {
			t.Fatal(err)
		}
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		turn, err := s.Prompt(dlPrompt("run"))
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, err := s.Cancel(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10*time.Second - time.Millisecond)
		synctest.Wait()
		select {
		case <-turn.Done():
			t.Fatal("turn ended before the cancel grace")
		default:
		}
		res := turn.Result()
		if res.StopReason != "cancelled" {
			t.Fatalf("turn result %+v", res)
		}
		synctest.Wait()
		fs := dlLog(t, s)
		end := dlTurnEnded(t, fs)
		closer := dlFind(fs, func(f dlFrame) bool {
			return f.Params.Update.ToolCallID == "stub_1" && f.Params.Update.Status == "failed"
		})
		if len(closer) != 1 || closer[0].Seq > end.Seq {
			t.Fatalf("closers %+v, turn_ended at %d", closer, end.Seq)
		}
		if v := s.View(); v.Status != store.StatusFailed || !strings.Contains(v.StatusReason, "cancel") {
			t.Fatalf("view %+v", v)
		}
	})
}

// TestCancelEscalationNoIdleWindow: once the cancelled turn is reported done, the session is already failed:
// a client reacting to the end of the turn (a REST wait=true caller, say) must not be able to start a new turn
// on an agent that is being killed. The grace path ends the turn (status idle) and only then fails the
// session; a Prompt in between starts a turn that the kill then breaks (lost about once in 100 rounds here).
func TestCancelEscalationNoIdleWindow(t *testing.T) {
	for i := range 400 {
		synctest.Test(t, func(t *testing.T) {
			r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), CancelGrace: time.Second},
				[]agents.Spec{stubbornSpec()}, "stubborn")
			if err != nil {
				t.Fatal(err)
			}
			s := dlSession(t, r, PolicyAsk)
			defer s.Close("test over")
			turn, _ := s.Prompt(dlPrompt("run"))
			synctest.Wait()
			_, _ = s.Cancel(context.Background())
			<-turn.Done()
			if _, err := s.Prompt(dlPrompt("again")); !errors.Is(err, sessionerr.ErrFailed) {
				t.Fatalf("round %d: a prompt right after the escalated cancel got %v, want sessionerr.ErrFailed", i, err)
			}
		})
	}
}
