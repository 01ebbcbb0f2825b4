package agents

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

const (
	toolCallLine = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"edit","status":"pending"}}}`
	// A request whose params hold the member "method":"session/update": a byte matcher on stdout counted it
	// as a notification that never came.
	decoyPermissionLine = `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"decoy","rawInput":{"method":"session/update"}},"options":[]}}`
	permissionLine      = `{"jsonrpc":"2.0","id":2,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t1"},"options":[]}}`
)

// TestPermissionWaitsForEarlierUpdates: a permission request runs on its own goroutine, so it could overtake
// the tool_call notification the agent sent before it. The handler for the request is called only once that
// notification has been handled, however long that takes (here: held for a fake minute), and a request
// before any notification is not held at all, even when its params mention "method":"session/update".
func TestPermissionWaitsForEarlierUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := newRecorder(gate)
		c := startRaw(t, &rawAgent{lines: []string{decoyPermissionLine, toolCallLine, permissionLine}}, rec)
		defer c.Stop()
		defer releaseOnce(gate) // a failed check must not leave the handler held

		start := time.Now()
		if got := <-rec.called; got != "permission decoy" {
			t.Fatalf("first call %q, want the decoy permission request", got)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("a permission request with no notification before it was held %s", d)
		}
		time.Sleep(time.Minute) // the notification handler is slow: the second request must keep waiting
		synctest.Wait()
		if got := rec.snapshot(); !slices.Equal(got, []string{"permission decoy"}) {
			t.Fatalf("while the tool_call was still being handled the handler saw %q", got)
		}
		releaseOnce(gate)
		<-rec.called
		<-rec.called
		if got, want := rec.snapshot(), []string{"permission decoy", "update", "permission t1"}; !slices.Equal(got, want) {
			t.Fatalf("handler saw %q, want wire order %q", got, want)
		}
	})
}

// TestFastAgentIsBackPressured: while the session's handler is held, an agent writing far more notifications
// than the SDK's queue holds (1 024) is made to wait on its stdout instead of having its connection closed;
// once the handler catches up, every notification is delivered in order.
func TestFastAgentIsBackPressured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 5000
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d"}}}}`, i)
		}
		gate := make(chan struct{})
		rec := newRecorder(gate)
		c := startRaw(t, &rawAgent{lines: lines}, rec)
		defer c.Stop()
		defer releaseOnce(gate) // a failed check must not leave the handler held

		synctest.Wait() // the agent has written all it can; everything is blocked on the held handler
		select {
		case <-c.Done():
			t.Fatal("the connection was closed while the handler was busy")
		default:
		}
		releaseOnce(gate)
		synctest.Wait() // the agent wrote the rest and waits for stdin to close
		select {
		case <-c.Done():
			t.Fatalf("connection closed after %d notifications", len(rec.snapshot()))
		default:
		}
		c.DrainUpdates()
		if got := len(rec.snapshot()); got != n {
			t.Fatalf("handled %d notifications, want %d", got, n)
		}
	})
}

func releaseOnce(gate chan struct{}) {
	select {
	case <-gate:
	default:
		close(gate)
	}
}
