package sessions

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	acp "github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"
)

// gateAgent is a built-in ACP agent whose session/load waits for release, so a test can act while a session
// is re-attaching. loading gets a value each time a load begins.
type gateAgent struct {
	acp.Agent // methods the gateway does not call here panic
	loading   chan struct{}
	release   chan struct{}
}

func (g *gateAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber, AgentCapabilities: acp.AgentCapabilities{LoadSession: true}}, nil
}

func (g *gateAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: "gate-1"}, nil
}

func (g *gateAgent) LoadSession(ctx context.Context, _ acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	g.loading <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	return acp.LoadSessionResponse{}, nil
}

func (g *gateAgent) Prompt(context.Context, acp.PromptRequest) (acp.PromptResponse, error) {
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func (g *gateAgent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func gateRegistry(t *testing.T, g *gateAgent) *Registry {
	t.Helper()
	spec := agents.Spec{Name: "gate", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		// No SetLogger: the SDK's reader starts inside NewAgentSideConnection and may log (a connection closed
		// at once) while SetLogger writes the field, a data race the race detector caught in CI.
		conn := acp.NewAgentSideConnection(g, out, in)
		select {
		case <-conn.Done():
		case <-ctx.Done():
		}
		return nil
	}}
	r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}, []agents.Spec{spec}, "gate")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPromptWhileReattaching: while one prompt re-attaches a detached session, another gets ErrTurnRunning
// (the re-attaching prompt is the session's turn) and the session reports starting; then the first turn runs.
func TestPromptWhileReattaching(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := &gateAgent{loading: make(chan struct{}, 1), release: make(chan struct{})}
	r := gateRegistry(t, g)
	defer shutdown(t, r)
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	localOf(s).detach("test")
	type outcome struct {
		turn *Turn
		err  error
	}
	first := make(chan outcome, 1)
	go func() {
		turn, err := s.Prompt(dlPrompt("one"))
		first <- outcome{turn, err}
	}()
	<-g.loading
	if _, err := s.Prompt(dlPrompt("two")); !errors.Is(err, sessionerr.ErrTurnRunning) {
		t.Errorf("prompt during the re-attach: %v, want sessionerr.ErrTurnRunning", err)
	}
	if st := s.Status(); st != store.StatusStarting {
		t.Errorf("status during the re-attach = %q, want starting", st)
	}
	if err := r.Detach(s.ID, "again"); !errors.Is(err, sessionerr.ErrNotReady) {
		t.Errorf("detach during the re-attach: %v, want sessionerr.ErrNotReady", err)
	}
	close(g.release)
	o := <-first
	if o.err != nil {
		t.Fatalf("re-attaching prompt: %v", o.err)
	}
	if res := o.turn.Result(); res.StopReason != "end_turn" || res.Err != nil {
		t.Errorf("turn ended %q, %v", res.StopReason, res.Err)
	}
}

// TestCloseWhileReattaching: a session closed while it re-attaches ends closed; the agent the re-attach
// started is stopped and the prompt gets ErrClosed.
func TestCloseWhileReattaching(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := &gateAgent{loading: make(chan struct{}, 1), release: make(chan struct{})}
	r := gateRegistry(t, g)
	defer shutdown(t, r)
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	localOf(s).detach("test")
	first := make(chan error, 1)
	go func() {
		_, err := s.Prompt(dlPrompt("one"))
		first <- err
	}()
	<-g.loading
	s.Close("deleted")
	close(g.release)
	if err := <-first; !errors.Is(err, sessionerr.ErrClosed) {
		t.Errorf("re-attaching prompt of a closed session: %v, want sessionerr.ErrClosed", err)
	}
	if st := s.Status(); st != store.StatusClosed {
		t.Errorf("status = %q, want closed", st)
	}
	if _, err := r.Get(s.ID); !errors.Is(err, sessionerr.ErrNotFound) {
		t.Errorf("closed session still listed: %v", err)
	}
}
