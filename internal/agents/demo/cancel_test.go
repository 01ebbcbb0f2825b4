package demo

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/acp-go-sdk"
)

type promptResult struct {
	stop acp.StopReason
	err  error
}

// startPrompt runs a prompt in the background.
func (h *harness) startPrompt(sid acp.SessionId, text string) <-chan promptResult {
	ch := make(chan promptResult, 1)
	go func() {
		stop, err := h.prompt(sid, text)
		ch <- promptResult{stop, err}
	}()
	return ch
}

// blockingClient answers permission requests only when release delivers an
// answer, or with the context's error once the agent withdraws the request.
func blockingClient(asked chan<- struct{}, release <-chan acp.RequestPermissionResponse, withdrawn chan<- struct{}) *testClient {
	return &testClient{answer: func(ctx context.Context, _ acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
		asked <- struct{}{}
		select {
		case r := <-release:
			return r, nil
		case <-ctx.Done():
			close(withdrawn)
			return acp.RequestPermissionResponse{}, ctx.Err()
		}
	}}
}

func TestCancelWhilePermissionPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asked, withdrawn := make(chan struct{}, 1), make(chan struct{})
		h := newHarness(t, context.Background(), Options{}, blockingClient(asked, nil, withdrawn))
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))

		result := h.startPrompt(sid, fullPrompt)
		<-asked
		synctest.Wait()
		seen := len(h.client.sessionUpdates(sid))
		if last := h.client.sessionUpdates(sid)[seen-1]; last.ToolCall == nil || last.ToolCall.ToolCallId != "edit_1" {
			t.Fatalf("last update before the permission = %q, want the edit tool_call", kindOf(last))
		}

		if err := h.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sid}); err != nil {
			t.Fatal(err)
		}
		r := <-result
		if r.err != nil || r.stop != acp.StopReasonCancelled {
			t.Fatalf("prompt = %q, %v; want cancelled", r.stop, r.err)
		}
		<-withdrawn // the agent cancelled its request ($/cancel_request)
		synctest.Wait()
		if n := len(h.client.sessionUpdates(sid)); n != seen {
			t.Errorf("%d updates after cancel, want none", n-seen)
		}
		if seen-before != 11 {
			t.Errorf("%d updates before the permission request, want 11", seen-before)
		}
	})
}

func TestCancelledOutcomeEndsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &testClient{answer: func(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
			return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
		}}
		h := newHarness(t, context.Background(), Options{}, client)
		sid := h.newSession()
		stop, err := h.prompt(sid, fullPrompt)
		if err != nil || stop != acp.StopReasonCancelled {
			t.Fatalf("prompt = %q, %v; want cancelled", stop, err)
		}
		us := h.client.sessionUpdates(sid)
		if last := us[len(us)-1]; last.ToolCall == nil || last.ToolCall.ToolCallId != "edit_1" {
			t.Errorf("last update = %q, want the edit tool_call and nothing after it", kindOf(last))
		}
	})
}

func TestCancelBetweenSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{Delay: time.Second}, &testClient{})
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))

		result := h.startPrompt(sid, fullPrompt)
		time.Sleep(2500 * time.Millisecond) // updates at 0 s, 1 s and 2 s
		synctest.Wait()
		seen := len(h.client.sessionUpdates(sid))
		if seen-before != 3 {
			t.Fatalf("%d updates after 2.5 s with a 1 s delay, want 3", seen-before)
		}

		cancelledAt := time.Now()
		if err := h.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sid}); err != nil {
			t.Fatal(err)
		}
		r := <-result
		if r.err != nil || r.stop != acp.StopReasonCancelled {
			t.Fatalf("prompt = %q, %v; want cancelled", r.stop, r.err)
		}
		if waited := time.Since(cancelledAt); waited != 0 {
			t.Errorf("cancel took %v of (fake) time, want it to interrupt the pause", waited)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(h.client.sessionUpdates(sid)); n != seen {
			t.Errorf("%d updates after cancel, want none", n-seen)
		}

		// The session is usable again.
		if stop, err := h.prompt(sid, "quick"); err != nil || stop != acp.StopReasonEndTurn {
			t.Errorf("next prompt = %q, %v", stop, err)
		}
	})
}

func TestDelayPacesTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{Delay: time.Second}, &testClient{})
		sid := h.newSession()
		start := time.Now()
		if _, err := h.prompt(sid, fullPrompt); err != nil {
			t.Fatal(err)
		}
		// 17 updates and the permission request: 17 pauses.
		if got, want := time.Since(start), 17*time.Second; got != want {
			t.Errorf("turn took %v, want %v", got, want)
		}
	})
}

func TestSecondPromptWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asked, release := make(chan struct{}, 1), make(chan acp.RequestPermissionResponse, 1)
		h := newHarness(t, context.Background(), Options{}, blockingClient(asked, release, make(chan struct{})))
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))

		first := h.startPrompt(sid, fullPrompt)
		<-asked
		_, err := h.prompt(sid, "quick")
		if requestCode(err) != -32600 {
			t.Fatalf("second prompt: err = %v, want code -32600", err)
		}
		if want := `"a turn is already running"`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("second prompt error %v does not mention %s", err, want)
		}

		release <- selectOption("allow-once")
		r := <-first
		if r.err != nil || r.stop != acp.StopReasonEndTurn {
			t.Fatalf("first prompt = %q, %v; want end_turn", r.stop, r.err)
		}
		if got := kinds(h.client.sessionUpdates(sid)[before:]); len(got) != len(fullTurnKinds) {
			t.Errorf("first turn sent %d updates, want %d", len(got), len(fullTurnKinds))
		}
	})
}

func TestSessionsAreIndependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asked, withdrawn := make(chan struct{}, 1), make(chan struct{})
		h := newHarness(t, context.Background(), Options{}, blockingClient(asked, nil, withdrawn))
		a := h.newSession()
		resp, err := h.conn.NewSession(context.Background(), acp.NewSessionRequest{Cwd: testCwd, McpServers: []acp.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		b := resp.SessionId
		if a == b {
			t.Fatalf("two sessions share id %q", a)
		}
		result := h.startPrompt(a, fullPrompt)
		<-asked
		if stop, err := h.prompt(b, "quick"); err != nil || stop != acp.StopReasonEndTurn {
			t.Errorf("prompt on the other session = %q, %v", stop, err)
		}
		if err := h.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: a}); err != nil {
			t.Fatal(err)
		}
		if r := <-result; r.stop != acp.StopReasonCancelled {
			t.Errorf("cancelled prompt = %q, %v", r.stop, r.err)
		}
		<-withdrawn
	})
}
