package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	acp "github.com/coder/acp-go-sdk"
)

// quietAgent is an in-process agent whose prompt does what the test tells it, step by step: write a line to
// its stderr ("stderr:<line>"), send a message chunk ("chunk") or end the turn ("end").
type quietAgent struct {
	acp.Agent
	conn   *acp.AgentSideConnection
	stderr io.Writer
	steps  chan string
	dead   context.Context
}

func (a *quietAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *quietAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: "quiet"}, nil
}

func (a *quietAgent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *quietAgent) Prompt(_ context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	for {
		select {
		case <-a.dead.Done():
			return acp.PromptResponse{}, a.dead.Err()
		case step := <-a.steps:
			switch {
			case step == "end":
				return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
			case step == "ask":
				_, _ = a.conn.RequestPermission(a.dead, acp.RequestPermissionRequest{SessionId: p.SessionId,
					ToolCall: acp.ToolCallUpdate{ToolCallId: "t1"},
					Options:  []acp.PermissionOption{{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce}}})
			case step == "chunk":
				_ = a.conn.SessionUpdate(a.dead, acp.SessionNotification{SessionId: p.SessionId, Update: acp.UpdateAgentMessageText("working")})
			default:
				fmt.Fprintln(a.stderr, strings.TrimPrefix(step, "stderr:"))
			}
		}
	}
}

func quietSpec(steps chan string) agents.Spec {
	return agents.Spec{Name: "quiet", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		stderr := agents.BuiltinStderr(ctx)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // a prompt still running when the gateway closes stdin ends with the agent
		a := &quietAgent{dead: ctx, steps: steps, stderr: stderr}
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

// lockedBuffer is a log sink several goroutines write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type quietNotice struct {
	Seq    uint64
	Params struct {
		TurnID     string   `json:"turnId"`
		Seconds    int64    `json:"seconds"`
		StderrTail []string `json:"stderrTail"`
	}
}

func quietNotices(t *testing.T, s *Session) []quietNotice {
	t.Helper()
	var out []quietNotice
	for _, f := range dlFind(dlLog(t, s), func(f dlFrame) bool { return f.Method == "_gateway/agent_quiet" }) {
		var n quietNotice
		if err := json.Unmarshal([]byte(f.Raw), &n); err != nil {
			t.Fatal(err)
		}
		n.Seq = f.Seq
		out = append(out, n)
	}
	return out
}

// TestQuietTurnNotice: a turn during which the agent sends nothing gets, after QuietNotice, a logged
// `_gateway/agent_quiet {turnId, seconds, stderrTail}` and an info log line with the agent's stderr; again at
// doubling intervals while it stays quiet; a frame from the agent starts the count again; none after the turn.
func TestQuietTurnNotice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &lockedBuffer{}
		steps := make(chan string)
		r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(logs, nil)), QuietNotice: 15 * time.Second},
			[]agents.Spec{quietSpec(steps)}, "quiet")
		if err != nil {
			t.Fatal(err)
		}
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		turn, err := s.Prompt(dlPrompt("hello"))
		if err != nil {
			t.Fatal(err)
		}
		steps <- "stderr:connecting to api.example.com"
		steps <- "stderr:error: 401 invalid api key; retrying in 30s"
		time.Sleep(15*time.Second - time.Millisecond)
		synctest.Wait()
		if n := quietNotices(t, s); len(n) != 0 {
			t.Fatalf("notice before 15 s: %+v", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		n := quietNotices(t, s)
		wantTail := []string{"connecting to api.example.com", "error: 401 invalid api key; retrying in 30s"}
		if len(n) != 1 || n[0].Params.TurnID != turn.ID || n[0].Params.Seconds != 15 || fmt.Sprint(n[0].Params.StderrTail) != fmt.Sprint(wantTail) {
			t.Fatalf("after 15 s: notices %+v, want one for turn %s, 15 s, stderr %q", n, turn.ID, wantTail)
		}
		if l := logs.String(); !strings.Contains(l, `level=INFO msg="agent quiet: no frame from the agent during the turn"`) ||
			!strings.Contains(l, ` turn=`+turn.ID+` seconds=15 stderr="connecting to api.example.com\nerror: 401 invalid api key; retrying in 30s"`) {
			t.Errorf("no info line with the stderr in the log:\n%s", logs.String())
		}

		// Still quiet: the next notice comes after twice the wait (at 45 s), not at 30 s.
		time.Sleep(30*time.Second - time.Millisecond)
		synctest.Wait()
		if n := quietNotices(t, s); len(n) != 1 {
			t.Fatalf("notice before the doubled wait: %+v", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := quietNotices(t, s); len(n) != 2 || n[1].Params.Seconds != 45 {
			t.Fatalf("after 45 s: notices %+v, want a second one saying 45 s", n)
		}

		// A frame from the agent is progress: the count starts again at the next check (105 s), and the
		// agent is found quiet 15 s after it.
		steps <- "chunk"
		time.Sleep(60 * time.Second)
		synctest.Wait()
		if n := quietNotices(t, s); len(n) != 2 {
			t.Fatalf("notice right after progress: %+v", n)
		}
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if n := quietNotices(t, s); len(n) != 3 || n[2].Params.Seconds != 15 {
			t.Fatalf("15 s after progress was seen: notices %+v, want a third saying 15 s", n)
		}

		steps <- "end"
		if res := turn.Result(); res.StopReason != "end_turn" {
			t.Fatalf("turn %+v", res)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := quietNotices(t, s); len(n) != 3 {
			t.Fatalf("notice after the turn ended: %+v", n)
		}
	})
}

// TestQuietTurnNoticeNotWhileAskingUser: an agent waiting for a person to answer its permission request is
// quiet for a reason everyone can see: no notice.
func TestQuietTurnNoticeNotWhileAskingUser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		steps := make(chan string)
		r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), QuietNotice: 15 * time.Second},
			[]agents.Spec{quietSpec(steps)}, "quiet")
		if err != nil {
			t.Fatal(err)
		}
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		if _, err := s.Prompt(dlPrompt("hello")); err != nil {
			t.Fatal(err)
		}
		go func() { steps <- "ask" }()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n := quietNotices(t, s); len(n) != 0 {
			t.Fatalf("notices while a permission request waits for a user: %+v", n)
		}
	})
}
