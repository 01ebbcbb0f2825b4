package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/acpschema"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	acp "github.com/coder/acp-go-sdk"
)

func demoRegistry(t *testing.T, cfg Config) *Registry {
	t.Helper()
	if cfg.Workdir == "" {
		cfg.Workdir = t.TempDir()
	}
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, &validatingReader{t: t, r: in}, out)
	}}
	r, err := NewRegistry(cfg, []agents.Spec{spec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return r
}

// validatingReader checks every line the gateway sends the agent against ACP's stable schema: what the
// gateway originates must be plain ACP. The demo agent asks the client only session/request_permission, so
// every response is checked as its result.
type validatingReader struct {
	t    *testing.T
	r    io.Reader
	line []byte
}

func (v *validatingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			v.line = append(v.line, c)
			continue
		}
		v.check(v.line)
		v.line = v.line[:0]
	}
	return n, err
}

func (v *validatingReader) check(line []byte) {
	if err := acpschema.ValidateFrame(acpschema.Stable, line); err != nil {
		v.t.Errorf("gateway sent the agent an invalid frame: %v\n%s", err, line)
		return
	}
	var m struct {
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(line, &m)
	if m.Method == "" && m.Result != nil {
		if err := acpschema.ValidateResult(acpschema.Stable, "session/request_permission", m.Result); err != nil {
			v.t.Errorf("invalid permission response: %v\n%s", err, line)
		}
	}
}

func textPrompt(s string) []json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return []json.RawMessage{b}
}

// waitPending waits until the session has a pending permission request.
func waitPending(t *testing.T, s *Session) PermissionView {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if p := s.PendingPermissions(); len(p) > 0 {
			return p[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no pending permission")
	return PermissionView{}
}

// TestCloseWithPendingPermission closes a session whose turn waits on a permission: the request is denied,
// the turn ends cancelled, the agent stops, and the log's last frame says closed.
func TestCloseWithPendingPermission(t *testing.T) {
	r := demoRegistry(t, Config{})
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(textPrompt("edit please"))
	if err != nil {
		t.Fatal(err)
	}
	waitPending(t, s)
	closed := make(chan struct{})
	go func() { s.Close("test"); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung")
	}
	if res := turn.Result(); res.StopReason != "cancelled" {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	if _, err := r.Get(s.ID); err == nil {
		t.Fatal("closed session still registered")
	}
}

func TestRegistryShutdownWithRunningTurns(t *testing.T) {
	r := demoRegistry(t, Config{})
	for i := 0; i < 3; i++ {
		s, err := r.Create(context.Background(), CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prompt(textPrompt("edit please")); err != nil {
			t.Fatal(err)
		}
		waitPending(t, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(r.List()); n != 0 {
		t.Fatalf("%d sessions left", n)
	}
}

// slowStartAgent answers initialize only once released: a session stays "starting" as long as the test wants.
type slowStartAgent struct {
	acp.Agent
	release <-chan struct{}
}

func (a *slowStartAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	<-a.release
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *slowStartAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: "slow"}, nil
}

// TestShutdownWhileStarting: the gateway shuts down while a session's agent is still starting. Creation fails,
// the agent is stopped all the same, and nothing is left registered.
func TestShutdownWhileStarting(t *testing.T) {
	release := make(chan struct{})
	stopped := make(chan struct{})
	spec := agents.Spec{Name: "slow", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		defer close(stopped)
		ready := make(chan struct{})
		conn := acp.NewAgentSideConnection(&slowStartAgent{release: release}, out, gatedReader{in, ready})
		close(ready)
		select {
		case <-conn.Done():
		case <-ctx.Done():
		}
		_ = gatedReader{in, ready}.Close()
		<-conn.Done()
		return nil
	}}
	r, err := NewRegistry(Config{Workdir: t.TempDir()}, []agents.Spec{spec}, "slow")
	if err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	go func() {
		_, err := r.Create(context.Background(), CreateOptions{})
		created <- err
	}()
	for len(r.List()) == 0 {
		time.Sleep(time.Millisecond)
	}
	shut := make(chan error, 1)
	go func() { shut <- r.Shutdown(context.Background()) }()
	for {
		if s := r.List(); len(s) == 0 || core.ControlOf(s[0]).Closing() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-created; err == nil {
		t.Fatal("a session closed while starting was created")
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the starting agent was never stopped")
	}
	if n := len(r.List()); n != 0 {
		t.Fatalf("%d sessions left", n)
	}
}

// authAgent refuses session/new until authenticate("key") was called, like codex-acp without a login.
type authAgent struct {
	acp.Agent
	mu     sync.Mutex
	authed bool
}

func (a *authAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber, AuthMethods: []acp.AuthMethod{}}, nil
}

func (a *authAgent) Authenticate(_ context.Context, r acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	if r.MethodId != "key" {
		return acp.AuthenticateResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown method"})
	}
	a.mu.Lock()
	a.authed = true
	a.mu.Unlock()
	return acp.AuthenticateResponse{}, nil
}

func (a *authAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.authed {
		return acp.NewSessionResponse{}, acp.NewAuthRequired(nil)
	}
	return acp.NewSessionResponse{SessionId: "authed"}, nil
}

func authSpec(method string) agents.Spec {
	return agents.Spec{Name: "auth", Kind: agents.KindBuiltin, AuthMethod: method, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		ready := make(chan struct{})
		conn := acp.NewAgentSideConnection(&authAgent{}, out, gatedReader{in, ready})
		close(ready)
		select {
		case <-conn.Done():
		case <-ctx.Done():
		}
		_ = gatedReader{in, ready}.Close()
		<-conn.Done()
		return nil
	}}
}

// TestAuthenticateBeforeNewSession: an agent that requires ACP authenticate gets it from the agent's
// configured method; without one, creation fails with the agent's -32000.
func TestAuthenticateBeforeNewSession(t *testing.T) {
	for _, c := range []struct {
		method, wantErr string
	}{{"key", ""}, {"", "-32000"}, {"wrong", "authenticate wrong"}} {
		r, err := NewRegistry(Config{Workdir: t.TempDir()}, []agents.Spec{authSpec(c.method)}, "auth")
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Create(context.Background(), CreateOptions{})
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("method %q: %v", c.method, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("method %q: err %v, want %q", c.method, err, c.wantErr)
		}
		_ = r.Shutdown(context.Background())
	}
}

// TestShutdownEndsAStartThatNeverAnswers: a session whose agent never answers initialize (its start timeout
// an hour away) does not outlive the shutdown: Shutdown cuts the start short, stops the agent and returns, and
// the creator hears ErrShuttingDown.
func TestShutdownEndsAStartThatNeverAnswers(t *testing.T) {
	release := make(chan struct{}) // never closed: initialize never answers
	stopped := make(chan struct{})
	spec := agents.Spec{Name: "silent", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		defer close(stopped)
		ready := make(chan struct{})
		conn := acp.NewAgentSideConnection(&slowStartAgent{release: release}, out, gatedReader{in, ready})
		close(ready)
		select {
		case <-conn.Done():
		case <-ctx.Done():
		}
		_ = gatedReader{in, ready}.Close()
		return nil
	}}
	r, err := NewRegistry(Config{Workdir: t.TempDir(), StartTimeout: time.Hour, StopGrace: 100 * time.Millisecond}, []agents.Spec{spec}, "silent")
	if err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	go func() {
		_, err := r.Create(context.Background(), CreateOptions{})
		created <- err
	}()
	waitUntil(t, func() bool { return len(r.List()) == 1 })
	shut := make(chan error, 1)
	go func() { shut <- r.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown waited on a start that never ends")
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Shutdown returned with the starting agent still running")
	}
	if err := <-created; !errors.Is(err, sessionerr.ErrShuttingDown) {
		t.Fatalf("Create: %v, want sessionerr.ErrShuttingDown", err)
	}
}
