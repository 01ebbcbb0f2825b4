package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"
)

// testAgent is the path of internal/testagent, built once by TestMain.
var testAgent string

func TestMain(m *testing.M) {
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "prctl(PR_SET_CHILD_SUBREAPER):", err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "agents-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testAgent = filepath.Join(dir, "testagent")
	build := exec.Command("go", "build", "-o", testAgent, "github.com/acp-gateway/gateway/internal/testagent")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test agent:", err)
		os.RemoveAll(dir)
		os.Exit(1)
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

// startTestAgent starts internal/testagent in the given mode as a real process, sends initialize and
// session/new, and returns the connection and the agent's session id. The agent is stopped at the end of
// the test.
func startTestAgent(t *testing.T, mode string, opts Options) (*Conn, string) {
	t.Helper()
	opts.Cwd = t.TempDir()
	opts.Env = []string{"PATH=" + os.Getenv("PATH")}
	if opts.Handler == nil {
		opts.Handler = newRecorder(nil)
	}
	c, err := Start(Spec{Name: "ta", Kind: KindACP, Command: testAgent, Args: []string{"-mode", mode}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Call(ctx, acp.AgentMethodInitialize, map[string]any{"protocolVersion": acp.ProtocolVersionNumber}); err != nil {
		t.Fatalf("initialize: %v (stderr %q)", err, c.Stderr())
	}
	res, err := c.Call(ctx, acp.AgentMethodSessionNew, map[string]any{"cwd": opts.Cwd, "mcpServers": []any{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	var nr struct{ SessionID string }
	if err := json.Unmarshal(res, &nr); err != nil || nr.SessionID == "" {
		t.Fatalf("session/new: %s %v", res, err)
	}
	return c, nr.SessionID
}

// prompt sends session/prompt with text and returns the stop reason.
func prompt(ctx context.Context, c *Conn, sid, text string) (string, error) {
	res, err := c.Call(ctx, acp.AgentMethodSessionPrompt, map[string]any{
		"sessionId": sid, "prompt": []map[string]string{{"type": "text", "text": text}},
	})
	if err != nil {
		return "", err
	}
	var r struct{ StopReason string }
	err = json.Unmarshal(res, &r)
	return r.StopReason, err
}
