package demo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testCwd = "/work/project"

// testClient is a minimal ACP client: it records every session/update in wire
// order and answers permission requests with answer (allow-once by default).
type testClient struct {
	// answer decides a permission request; nil selects "allow-once".
	answer func(ctx context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error)

	mu      sync.Mutex
	updates []acp.SessionNotification      // Guarded by mu.
	perms   []acp.RequestPermissionRequest // Guarded by mu.
}

var _ acp.Client = (*testClient)(nil)

func (c *testClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	return nil
}

func (c *testClient) RequestPermission(ctx context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms = append(c.perms, req)
	c.mu.Unlock()
	if c.answer != nil {
		return c.answer(ctx, req)
	}
	return selectOption("allow-once"), nil
}

func selectOption(id string) acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}
}

// sessionUpdates returns the updates recorded so far for one session.
func (c *testClient) sessionUpdates(sid acp.SessionId) []acp.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	var us []acp.SessionUpdate
	for _, n := range c.updates {
		if n.SessionId == sid {
			us = append(us, n.Update)
		}
	}
	return us
}

func (c *testClient) permissions() []acp.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acp.RequestPermissionRequest(nil), c.perms...)
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

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness runs Serve over two io.Pipes with an acp-go-sdk client on the other
// end. It must be created inside a synctest bubble: the bubble then proves
// that every goroutine of both sides has exited when the test ends.
type harness struct {
	t      *testing.T
	client *testClient
	conn   *acp.ClientSideConnection
	wire   *lockedBuffer // Everything the agent wrote, in order.

	toAgent  *io.PipeWriter
	served   chan error
	stopOnce sync.Once
	serveErr error
}

func newHarness(t *testing.T, ctx context.Context, opts Options, client *testClient) *harness {
	t.Helper()
	agentIn, toAgent := io.Pipe()
	fromAgent, agentOut := io.Pipe()
	h := &harness{t: t, client: client, wire: &lockedBuffer{}, toAgent: toAgent, served: make(chan error, 1)}
	go func() {
		err := Serve(ctx, opts, agentIn, agentOut)
		_ = agentOut.Close() // lets the client's reader see EOF
		h.served <- err
	}()
	h.conn = acp.NewClientSideConnection(client, toAgent, io.TeeReader(fromAgent, h.wire))
	h.conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		if err := h.stop(); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Serve returned %v, want nil", err)
		}
	})
	return h
}

// waitServed waits for Serve to return on its own (its context ended), then closes the agent's input, and returns
// what Serve returned. Closing the input first would race the context: the agent could see its peer gone
// before it sees the cancellation.
func (h *harness) waitServed() error {
	h.stopOnce.Do(func() {
		h.serveErr = <-h.served
		_ = h.toAgent.Close()
		<-h.conn.Done()
	})
	return h.serveErr
}

// stop closes the agent's input and returns what Serve returned.
func (h *harness) stop() error {
	h.stopOnce.Do(func() {
		_ = h.toAgent.Close()
		h.serveErr = <-h.served
		<-h.conn.Done()
	})
	return h.serveErr
}

// newSession initializes the connection, opens a session and waits until
// everything the agent sends after session/new has arrived.
func (h *harness) newSession() acp.SessionId {
	h.t.Helper()
	ctx := context.Background()
	if _, err := h.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
	resp, err := h.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: testCwd, McpServers: []acp.McpServer{}})
	if err != nil {
		h.t.Fatalf("session/new: %v", err)
	}
	synctest.Wait()
	return resp.SessionId
}

// prompt sends a text prompt and returns the stop reason.
func (h *harness) prompt(sid acp.SessionId, text string) (acp.StopReason, error) {
	resp, err := h.conn.Prompt(context.Background(), acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	return resp.StopReason, err
}

// kindOf names an update by its sessionUpdate discriminator.
func kindOf(u acp.SessionUpdate) string {
	switch {
	case u.UserMessageChunk != nil:
		return "user_message_chunk"
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
	case u.AvailableCommandsUpdate != nil:
		return "available_commands_update"
	case u.CurrentModeUpdate != nil:
		return "current_mode_update"
	case u.ConfigOptionUpdate != nil:
		return "config_option_update"
	case u.SessionInfoUpdate != nil:
		return "session_info_update"
	case u.UsageUpdate != nil:
		return "usage_update"
	}
	return "?"
}

func kinds(us []acp.SessionUpdate) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = kindOf(u)
	}
	return out
}

// messageText concatenates the text of all agent_message_chunks.
func messageText(us []acp.SessionUpdate) string {
	var b bytes.Buffer
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

// requestCode extracts the JSON-RPC error code, or 0.
func requestCode(err error) int {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}
