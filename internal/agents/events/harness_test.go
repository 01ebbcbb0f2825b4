package events

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/acpschema"
)

// exampleAgent is the path of examples/events-agent, testAgent that of internal/testagent (its events-*
// modes), both built once by TestMain.
var exampleAgent, testAgent string

func TestMain(m *testing.M) {
	// Like the gateway (cmd/gateway): orphaned descendants of the processes are re-parented to the test
	// process, so the tests see that killed ones are reaped, not left as zombies.
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "prctl(PR_SET_CHILD_SUBREAPER):", err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "events-agent-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exampleAgent = filepath.Join(dir, "events-agent")
	testAgent = filepath.Join(dir, "testagent")
	for bin, pkg := range map[string]string{exampleAgent: "examples/events-agent", testAgent: "internal/testagent"} {
		build := exec.Command("go", "build", "-o", bin, "github.com/acp-gateway/gateway/"+pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", pkg+":", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/acp-gateway/gateway/internal/agents.spawner")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testClient records session/updates and answers permission requests with answer (allow by default).
type testClient struct {
	answer func(ctx context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error)

	mu      sync.Mutex
	updates []acp.SessionUpdate            // Guarded by mu.
	perms   []acp.RequestPermissionRequest // Guarded by mu.
	changed chan struct{}                  // Guarded by mu; closed and replaced on every update.
}

func newTestClient() *testClient { return &testClient{changed: make(chan struct{})} }

func (c *testClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

func (c *testClient) RequestPermission(ctx context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms = append(c.perms, req)
	c.mu.Unlock()
	if c.answer != nil {
		return c.answer(ctx, req)
	}
	return selectOption("allow_once"), nil
}

func selectOption(id string) acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}
}

func (c *testClient) snapshot() ([]acp.SessionUpdate, []acp.RequestPermissionRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acp.SessionUpdate(nil), c.updates...), append([]acp.RequestPermissionRequest(nil), c.perms...)
}

// waitUpdates waits until at least n updates arrived.
func (c *testClient) waitUpdates(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		got, ch := len(c.updates), c.changed
		c.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("only %d updates after 10s, want %d", got, n)
		}
	}
}

func (c *testClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}
func (c *testClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}
func (c *testClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}
func (c *testClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}
func (c *testClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}
func (c *testClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}
func (c *testClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// harness runs Serve over io.Pipes with an acp-go-sdk client on the other end.
type harness struct {
	t      *testing.T
	client *testClient
	conn   *acp.ClientSideConnection
	wire   *lockedBuffer // everything Serve wrote
	cwd    string
	logs   *lockedBuffer

	toAgent  *io.PipeWriter
	served   chan error
	stopOnce sync.Once
	serveErr error
}

func testConfig(logs io.Writer) Config {
	return Config{
		Command:     exampleAgent,
		Logger:      slog.New(slog.NewTextHandler(logs, nil)),
		StopGrace:   500 * time.Millisecond,
		CancelGrace: 5 * time.Second,
	}
}

func newHarness(t *testing.T, ctx context.Context, cfg *Config, client *testClient) *harness {
	t.Helper()
	agentIn, toAgent := io.Pipe()
	fromAgent, agentOut := io.Pipe()
	h := &harness{t: t, client: client, wire: &lockedBuffer{}, logs: &lockedBuffer{}, toAgent: toAgent, served: make(chan error, 1)}
	c := testConfig(h.logs)
	if cfg != nil {
		c.Command, c.Args, c.Env, c.WriteTimeout = cfg.Command, cfg.Args, cfg.Env, cfg.WriteTimeout
		if cfg.CancelGrace != 0 {
			c.CancelGrace = cfg.CancelGrace
		}
		if cfg.StopGrace != 0 {
			c.StopGrace = cfg.StopGrace
		}
	}
	h.cwd = t.TempDir()
	if err := os.WriteFile(filepath.Join(h.cwd, "README.md"), []byte("# Test project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := Serve(ctx, c, agentIn, agentOut)
		_ = agentOut.Close()
		h.served <- err
	}()
	h.conn = acp.NewClientSideConnection(client, toAgent, io.TeeReader(fromAgent, h.wire))
	h.conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		if err := h.stop(); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Serve returned %v, want nil", err)
		}
		h.validateWire()
	})
	return h
}

func (h *harness) stop() error {
	h.stopOnce.Do(func() {
		_ = h.toAgent.Close()
		select {
		case h.serveErr = <-h.served:
		case <-time.After(15 * time.Second):
			h.t.Fatal("Serve did not return within 15s of EOF")
		}
		<-h.conn.Done()
	})
	return h.serveErr
}

// validateWire checks every session/update and session/request_permission Serve wrote against the
// unstable schema.
func (h *harness) validateWire() {
	sc := bufio.NewScanner(bytes.NewReader(h.wire.Bytes()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			h.t.Errorf("non-JSON on the wire: %q", sc.Text())
			continue
		}
		switch m.Method {
		case "session/update", "session/request_permission":
			if err := acpschema.ValidateParams(acpschema.Unstable, m.Method, m.Params); err != nil {
				h.t.Errorf("%s %s: %v", m.Method, m.Params, err)
			}
		}
	}
}

func (h *harness) newSession() acp.SessionId {
	h.t.Helper()
	ctx := context.Background()
	if _, err := h.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
	resp, err := h.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		h.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId
}

func (h *harness) prompt(sid acp.SessionId, text string) (acp.StopReason, error) {
	resp, err := h.conn.Prompt(context.Background(), acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	return resp.StopReason, err
}

func kindOf(u acp.SessionUpdate) string {
	switch {
	case u.AgentMessageChunk != nil:
		return "agent_message_chunk"
	case u.AgentThoughtChunk != nil:
		return "agent_thought_chunk"
	case u.ToolCall != nil:
		return "tool_call"
	case u.ToolCallUpdate != nil:
		return "tool_call_update"
	case u.Plan != nil:
		return "plan"
	case u.SessionInfoUpdate != nil:
		return "session_info_update"
	case u.UsageUpdate != nil:
		return "usage_update"
	}
	return "?"
}

func kinds(us []acp.SessionUpdate) string {
	var out []string
	for _, u := range us {
		out = append(out, kindOf(u))
	}
	return strings.Join(out, " ")
}

func messageText(us []acp.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func requestError(err error) *acp.RequestError {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re
	}
	return nil
}
