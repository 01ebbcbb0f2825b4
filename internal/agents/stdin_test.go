package agents

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// TestAgentThatStopsReadingStdin: an agent that stops reading its stdin lets the pipe fill up. A call whose
// write does not complete within the write timeout fails with an error that says so instead of hanging its
// caller; the agent is stopped, and the connection's failure reason says it stopped reading its input.
func TestAgentThatStopsReadingStdin(t *testing.T) {
	c, sid := startTestAgent(t, "deaf", Options{WriteTimeout: 500 * time.Millisecond})
	// More than the pipe and the agent's last read can take.
	big := strings.Repeat("m", 1<<20)
	callDone := make(chan error, 1)
	go func() {
		_, err := prompt(context.Background(), c, sid, big)
		callDone <- err
	}()
	select {
	case err := <-callDone:
		var re *acp.RequestError
		if err == nil || !errors.As(err, &re) || !strings.Contains(string(mustJSON(t, re.Data)), "stopped reading") {
			t.Fatalf("prompt to a deaf agent: %v (%+v)", err, re)
		}
	case <-time.After(60 * time.Second):
		c.Kill() // unblocks the write, so the goroutine ends
		<-callDone
		t.Fatal("a prompt to an agent that stopped reading its stdin still blocked after 60 s")
	}
	select {
	case <-c.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the connection to the stuck agent did not end")
	}
	if f := c.Failure(); !strings.Contains(f, "stopped reading its input") {
		t.Fatalf("failure reason %q does not say the agent stopped reading its input", f)
	}
	t.Logf("failure reason: %q", c.Failure())
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
