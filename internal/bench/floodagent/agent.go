// Package floodagent is a real ACP stdio agent (acp-go-sdk AgentSideConnection) built for benchmarks: on each
// prompt it sends N `agent_message_chunk`s of S bytes as fast as it can (or paced at a fixed rate), each
// stamped with its send time in the update's `_meta`, then answers `end_turn`.
//
// The prompt text chooses the flood: `flood [N [S]] [rate=R] [tools]`, e.g. `flood 10000 256` or
// `flood 20000 256 rate=10000 tools`. Missing values fall back to Options (FLOOD_N, FLOOD_S, FLOOD_RATE,
// FLOOD_MODE in the environment when run as a command).
//
// Every chunk carries `"_meta":{"flood":{"sentNs":<unix nanos>,"i":<index>}}` on the update object. With
// `tools`, every ToolEvery-th chunk is followed by a `tool_call` (pending) and a `tool_call_update`
// (completed), and every PermEvery-th by a `session/request_permission` round trip before the update: a
// turn then also measures the permission path. Tool updates are stamped the same way (`"i"` is the index of
// the chunk they follow, `"kind":"tool"`); clients should count only chunks for latency.
package floodagent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Options are the defaults of a flood when the prompt does not name them.
type Options struct {
	N         int     // chunks per prompt; 0 = 10 000
	S         int     // payload bytes per chunk; 0 = 256
	Rate      float64 // chunks per second; 0 = as fast as possible
	Tools     bool    // mix in tool calls and permission requests
	ToolEvery int     // 0 = 100
	PermEvery int     // 0 = 1 000
}

// OptionsFromEnv reads FLOOD_N, FLOOD_S, FLOOD_RATE and FLOOD_MODE (=tools).
func OptionsFromEnv(getenv func(string) string) Options {
	var o Options
	o.N, _ = strconv.Atoi(getenv("FLOOD_N"))
	o.S, _ = strconv.Atoi(getenv("FLOOD_S"))
	o.Rate, _ = strconv.ParseFloat(getenv("FLOOD_RATE"), 64)
	o.Tools = getenv("FLOOD_MODE") == "tools"
	return o
}

func (o Options) withDefaults() Options {
	if o.N <= 0 {
		o.N = 10000
	}
	if o.S < 0 {
		o.S = 0
	} else if o.S == 0 {
		o.S = 256
	}
	if o.ToolEvery <= 0 {
		o.ToolEvery = 100
	}
	if o.PermEvery <= 0 {
		o.PermEvery = 1000
	}
	return o
}

// ParsePrompt applies a prompt text `flood [N [S]] [rate=R] [tools]` to the defaults in o.
func ParsePrompt(text string, o Options) (Options, error) {
	f := strings.Fields(text)
	if len(f) > 0 && f[0] == "flood" {
		f = f[1:]
	}
	pos := 0
	for _, w := range f {
		switch {
		case w == "tools":
			o.Tools = true
		case strings.HasPrefix(w, "rate="):
			r, err := strconv.ParseFloat(strings.TrimPrefix(w, "rate="), 64)
			if err != nil || r < 0 {
				return o, fmt.Errorf("bad rate %q", w)
			}
			o.Rate = r
		default:
			v, err := strconv.Atoi(w)
			if err != nil || v < 0 {
				return o, fmt.Errorf("bad word %q (want: flood [N [S]] [rate=R] [tools])", w)
			}
			switch pos {
			case 0:
				o.N = v
			case 1:
				o.S = v
			default:
				return o, fmt.Errorf("too many numbers in %q", text)
			}
			pos++
		}
	}
	return o.withDefaults(), nil
}

// Serve runs the agent on in/out until the client goes away or ctx ends.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	a := &agent{opts: opts, cancels: map[string]context.CancelFunc{}}
	conn := acp.NewAgentSideConnection(a, out, in)
	conn.SetLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	a.conn = conn
	select {
	case <-conn.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type agent struct {
	opts Options
	conn *acp.AgentSideConnection
	ids  atomic.Uint64

	mu      sync.Mutex
	cancels map[string]context.CancelFunc // Guarded by mu; running prompt per session.
}

var _ acp.Agent = (*agent)(nil)

func (a *agent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion:   acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{},
		AgentInfo:         &acp.Implementation{Name: "floodagent", Version: "1"},
		AuthMethods:       []acp.AuthMethod{},
	}, nil
}

func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: acp.SessionId("flood-" + strconv.FormatUint(a.ids.Add(1), 10))}, nil
}

func (a *agent) Cancel(ctx context.Context, p acp.CancelNotification) error {
	a.mu.Lock()
	if c := a.cancels[string(p.SessionId)]; c != nil {
		c()
	}
	a.mu.Unlock()
	return nil
}

func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}

func promptText(blocks []acp.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Text != nil {
			b.WriteString(c.Text.Text)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// payload returns s printable ASCII bytes that need no JSON escaping.
func payload(s int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 "
	var b strings.Builder
	b.Grow(s)
	for b.Len() < s {
		b.WriteString(alphabet[:min(len(alphabet), s-b.Len())])
	}
	return b.String()
}

func stamp(i int, kind string) map[string]any {
	m := map[string]any{"sentNs": time.Now().UnixNano(), "i": i}
	if kind != "" {
		m["kind"] = kind
	}
	return map[string]any{"flood": m}
}

func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	o, err := ParsePrompt(promptText(p.Prompt), a.opts.withDefaults())
	if err != nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	ctx, cancel := context.WithCancel(ctx)
	sid := string(p.SessionId)
	a.mu.Lock()
	a.cancels[sid] = cancel
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.cancels, sid)
		a.mu.Unlock()
		cancel()
	}()

	text := payload(o.S)
	var interval time.Duration
	if o.Rate > 0 {
		interval = time.Duration(float64(time.Second) / o.Rate)
	}
	start := time.Now()
	for i := 0; i < o.N; i++ {
		if ctx.Err() != nil {
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
		if interval > 0 {
			// Paced: chunk i is due at start + i*interval. Sleep only when more than a little ahead, so the
			// pace holds on average even with a coarse timer; the stamp is the real send time anyway.
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 200*time.Microsecond {
				time.Sleep(d)
			}
		}
		if o.Tools && i > 0 && i%o.PermEvery == 0 {
			if err := a.permission(ctx, p.SessionId, i); err != nil {
				return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
			}
		}
		err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: acp.SessionUpdate{
			AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{Meta: stamp(i, ""), Content: acp.TextBlock(text)},
		}})
		if err != nil {
			return acp.PromptResponse{}, err
		}
		if o.Tools && i%o.ToolEvery == o.ToolEvery-1 {
			if err := a.toolCall(ctx, p.SessionId, i); err != nil {
				return acp.PromptResponse{}, err
			}
		}
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func (a *agent) toolCall(ctx context.Context, sid acp.SessionId, i int) error {
	id := acp.ToolCallId("tc-" + strconv.Itoa(i))
	if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: acp.SessionUpdate{
		ToolCall: &acp.SessionUpdateToolCall{Meta: stamp(i, "tool"), ToolCallId: id, Title: "Read /bench/file.go",
			Kind: acp.ToolKindRead, Status: acp.ToolCallStatusPending, Locations: []acp.ToolCallLocation{{Path: "/bench/file.go"}},
			RawInput: map[string]any{"path": "/bench/file.go"}},
	}}); err != nil {
		return err
	}
	return a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: acp.SessionUpdate{
		ToolCallUpdate: &acp.SessionToolCallUpdate{Meta: stamp(i, "tool"), ToolCallId: id, Status: acp.Ptr(acp.ToolCallStatusCompleted),
			Content: []acp.ToolCallContent{acp.ToolContent(acp.TextBlock("package bench\n"))}},
	}})
}

func (a *agent) permission(ctx context.Context, sid acp.SessionId, i int) error {
	id := acp.ToolCallId("perm-" + strconv.Itoa(i))
	if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: acp.SessionUpdate{
		ToolCall: &acp.SessionUpdateToolCall{Meta: stamp(i, "tool"), ToolCallId: id, Title: "Edit /bench/file.go",
			Kind: acp.ToolKindEdit, Status: acp.ToolCallStatusPending},
	}}); err != nil {
		return err
	}
	res, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{SessionId: sid,
		ToolCall: acp.ToolCallUpdate{ToolCallId: id},
		Options: []acp.PermissionOption{
			{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		}})
	if err != nil {
		return err
	}
	status := acp.ToolCallStatusFailed
	if res.Outcome.Selected != nil && res.Outcome.Selected.OptionId == "allow" {
		status = acp.ToolCallStatusCompleted
	}
	return a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: acp.SessionUpdate{
		ToolCallUpdate: &acp.SessionToolCallUpdate{Meta: stamp(i, "tool"), ToolCallId: id, Status: acp.Ptr(status)},
	}})
}
