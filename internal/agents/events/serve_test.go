package events

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// A full turn through the real example agent: thoughts, plan, tool calls (one failed by exit code), a
// permission request answered allow, usage, a provider warning, the streamed answer without the repeated
// final, done.
func TestFullTurn(t *testing.T) {
	client := newTestClient()
	h := newHarness(t, context.Background(), nil, client)
	sid := h.newSession()
	stop, err := h.prompt(sid, "hello world")
	if err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	us, perms := client.snapshot()
	want := "agent_thought_chunk agent_thought_chunk plan tool_call tool_call_update tool_call tool_call_update plan " +
		"tool_call tool_call_update plan usage_update session_info_update agent_message_chunk agent_message_chunk agent_message_chunk plan"
	if got := kinds(us); got != want {
		t.Errorf("updates:\n got %s\nwant %s", got, want)
	}
	if got, want := messageText(us), "You said: hello world. The edit was allowed (nothing was written)."; got != want {
		t.Errorf("answer %q, want %q (the final assistant_message must not repeat it)", got, want)
	}
	read := us[3].ToolCall
	if read.Title != "read_file README.md" || read.Kind != acp.ToolKindRead || len(read.Locations) != 1 || read.Locations[0].Path != h.cwd+"/README.md" {
		t.Errorf("read tool call %+v", read)
	}
	if rd := us[4].ToolCallUpdate; *rd.Status != acp.ToolCallStatusCompleted || !strings.Contains(rd.Content[0].Content.Content.Text.Text, "Test project") {
		t.Errorf("read result %+v", rd)
	}
	if chk := us[6].ToolCallUpdate; *chk.Status != acp.ToolCallStatusFailed || chk.Content[0].Content.Content.Text.Text != "exit: exit code 2" {
		t.Errorf("a nonzero exit must be failed: %+v", chk)
	}
	if len(perms) != 1 {
		t.Fatalf("%d permission requests", len(perms))
	}
	p := perms[0]
	if p.ToolCall.ToolCallId != "edit" || len(p.Options) != 2 || p.Options[0].Kind != "allow_once" || p.Options[1].Kind != "reject_once" ||
		len(p.ToolCall.Locations) != 1 || p.ToolCall.Locations[0].Path != h.cwd+"/notes.md" {
		t.Errorf("permission request %+v", p)
	}
	if u := us[11].UsageUpdate; u.Used != 1000+len("hello world") || u.Size != 200000 {
		t.Errorf("usage %+v", u)
	}
	w, _ := json.Marshal(us[12].SessionInfoUpdate.Meta)
	if !strings.Contains(string(w), `"provider":"example"`) {
		t.Errorf("warning meta %s", w)
	}
	ids := map[string]bool{}
	for _, u := range us {
		if c := u.AgentMessageChunk; c != nil {
			ids[*c.MessageId] = true
		}
	}
	if len(ids) != 1 {
		t.Errorf("answer chunks must share one messageId: %v", ids)
	}

	// A second turn on the same process.
	stop, err = h.prompt(sid, "quick")
	if err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("second prompt: %v %v", stop, err)
	}
	us2, _ := client.snapshot()
	if got := messageText(us2[len(us):]); got != "You said: quick" {
		t.Errorf("second turn %q", got)
	}
}

// A rejected permission goes back to the process as a denial with the reason.
func TestPermissionRejected(t *testing.T) {
	client := newTestClient()
	client.answer = func(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
		return selectOption("reject_once"), nil
	}
	h := newHarness(t, context.Background(), nil, client)
	sid := h.newSession()
	if stop, err := h.prompt(sid, "edit please"); err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	us, _ := client.snapshot()
	if got := messageText(us); !strings.HasSuffix(got, "The edit was not allowed: rejected by the user.") {
		t.Errorf("answer %q", got)
	}
	edit := us[9].ToolCallUpdate
	if *edit.Status != acp.ToolCallStatusFailed || edit.Content[0].Content.Content.Text.Text != "permission: rejected by the user" {
		t.Errorf("edit result %+v", edit)
	}
}

// Cancel: an agent that answers interrupted, one whose terminal status races the cancel, and one that
// ignores cancel (resolved by the grace). All end cancelled.
func TestCancel(t *testing.T) {
	for _, mode := range []string{"slow", "race", "stubborn"} {
		t.Run(mode, func(t *testing.T) {
			client := newTestClient()
			h := newHarness(t, context.Background(), &Config{Command: exampleAgent, CancelGrace: 400 * time.Millisecond}, client)
			sid := h.newSession()
			type res struct {
				stop acp.StopReason
				err  error
			}
			done := make(chan res, 1)
			go func() {
				s, err := h.prompt(sid, mode)
				done <- res{s, err}
			}()
			client.waitUpdates(t, 3)
			start := time.Now()
			if err := h.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sid}); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-done:
				if r.err != nil || r.stop != acp.StopReasonCancelled {
					t.Errorf("stop %v err %v, want cancelled", r.stop, r.err)
				}
				if mode != "stubborn" && time.Since(start) > 300*time.Millisecond {
					t.Errorf("cancel took %v", time.Since(start))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("prompt did not return after cancel")
			}
		})
	}
}

// A cancel while a permission request is pending: the request's context ends, the process gets a denial,
// the turn ends cancelled.
func TestCancelDuringPermission(t *testing.T) {
	client := newTestClient()
	asked := make(chan struct{})
	client.answer = func(ctx context.Context, _ acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
		close(asked)
		<-ctx.Done()
		return acp.RequestPermissionResponse{}, ctx.Err()
	}
	h := newHarness(t, context.Background(), nil, client)
	sid := h.newSession()
	done := make(chan acp.StopReason, 1)
	go func() {
		s, _ := h.prompt(sid, "edit")
		done <- s
	}()
	<-asked
	if err := h.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-done:
		if s != acp.StopReasonCancelled {
			t.Errorf("stop %v", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("prompt did not return")
	}
}

// The process exiting mid-turn answers the prompt with a JSON-RPC error carrying the exit status and the
// stderr tail; later prompts fail the same way.
func TestCrash(t *testing.T) {
	client := newTestClient()
	h := newHarness(t, context.Background(), nil, client)
	sid := h.newSession()
	_, err := h.prompt(sid, "crash")
	re := requestError(err)
	if re == nil || re.Code != -32603 {
		t.Fatalf("crash: %v", err)
	}
	data, _ := json.Marshal(re.Data)
	for _, want := range []string{"exited during the turn", "exit status 3", "crashing on purpose"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("error data %s lacks %q", data, want)
		}
	}
	us, _ := client.snapshot()
	if messageText(us) != "About to crash." {
		t.Errorf("updates before the crash: %q", messageText(us))
	}
	if _, err := h.prompt(sid, "quick"); requestError(err) == nil {
		t.Errorf("prompt after exit: %v", err)
	}
}

// Non-JSON lines and unknown types are dropped and counted; the turn goes on.
func TestNoise(t *testing.T) {
	client := newTestClient()
	h := newHarness(t, context.Background(), nil, client)
	sid := h.newSession()
	if stop, err := h.prompt(sid, "noise"); err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	us, _ := client.snapshot()
	if got := kinds(us); got != "agent_message_chunk" || messageText(us) != "Still here." {
		t.Errorf("updates %s %q", got, messageText(us))
	}
	logs := string(h.logs.Bytes())
	if !strings.Contains(logs, "this line is not JSON") || !strings.Contains(logs, "dropped=2") {
		t.Errorf("logs: %s", logs)
	}
}

// Recursion nodes and subagents through the process.
func TestNodes(t *testing.T) {
	client := newTestClient()
	h := newHarness(t, context.Background(), nil, client)
	sid := h.newSession()
	if stop, err := h.prompt(sid, "nodes"); err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	us, _ := client.snapshot()
	want := "agent_thought_chunk tool_call tool_call_update tool_call tool_call_update tool_call tool_call_update agent_message_chunk"
	if got := kinds(us); got != want {
		t.Errorf("updates:\n got %s\nwant %s", got, want)
	}
	if s := us[4].ToolCallUpdate; *s.Status != acp.ToolCallStatusFailed {
		t.Errorf("timed_out subagent: %+v", s)
	}
}

// Shutdown on input EOF with a process that ignores stdin EOF and SIGTERM: SIGKILL to the group, and no
// process of the group survives.
func TestShutdownKillsGroup(t *testing.T) {
	client := newTestClient()
	script := `trap "" TERM; sleep 300 & echo $! > child.pid; wait`
	h := newHarness(t, context.Background(), &Config{Command: "/bin/sh", Args: []string{"-c", script}, StopGrace: 200 * time.Millisecond}, client)
	sid := h.newSession()
	_ = sid
	var childPid int
	deadline := time.Now().Add(5 * time.Second)
	for childPid == 0 && time.Now().Before(deadline) {
		b, _ := readFile(h.cwd + "/child.pid")
		childPid = atoi(strings.TrimSpace(string(b)))
		time.Sleep(20 * time.Millisecond)
	}
	if childPid == 0 {
		t.Fatal("child did not start")
	}
	start := time.Now()
	if err := h.stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	// Killed but not yet reaped (a container's pid 1 may never reap it) counts as gone: state Z.
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(childPid, 0); err == nil {
		if st, _ := readFile("/proc/" + strconv.Itoa(childPid) + "/stat"); !isZombie(st) {
			t.Errorf("grandchild %d survived: %s", childPid, st)
		}
	}
}

// Serve returns ctx.Err() when ctx ends, after stopping the processes.
func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	client := newTestClient()
	h := newHarness(t, ctx, nil, client)
	sid := h.newSession()
	done := make(chan error, 1)
	go func() {
		_, err := h.prompt(sid, "slow")
		done <- err
	}()
	client.waitUpdates(t, 2)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("prompt did not end")
	}
	if err := h.stop(); err != context.Canceled {
		t.Errorf("Serve returned %v, want context.Canceled", err)
	}
}

// A command that cannot start fails session/new, not Serve.
func TestStartFailure(t *testing.T) {
	client := newTestClient()
	h := newHarness(t, context.Background(), &Config{Command: "/nonexistent/agent"}, client)
	if _, err := h.conn.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	_, err := h.conn.NewSession(context.Background(), acp.NewSessionRequest{Cwd: h.cwd, McpServers: []acp.McpServer{}})
	if re := requestError(err); re == nil || !strings.Contains(mustJSON(re.Data), "cannot start") {
		t.Errorf("session/new: %v", err)
	}
}

// A second prompt while a turn runs is refused and does not disturb the running turn.
func TestBusy(t *testing.T) {
	client := newTestClient()
	h := newHarness(t, context.Background(), nil, client)
	sid := h.newSession()
	done := make(chan acp.StopReason, 1)
	go func() {
		s, _ := h.prompt(sid, "slow")
		done <- s
	}()
	client.waitUpdates(t, 1)
	if _, err := h.prompt(sid, "quick"); requestError(err) == nil {
		t.Errorf("second prompt: %v", err)
	}
	_ = h.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sid})
	if s := <-done; s != acp.StopReasonCancelled {
		t.Errorf("first turn %v", s)
	}
}
