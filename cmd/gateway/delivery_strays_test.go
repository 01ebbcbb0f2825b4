package main

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestDeliveryEscapedGrandchildKilled: a process the agent starts in a session of its own (setsid) leaves
// the agent's process group. When the session closes it is killed too, and reaped by the gateway (a child
// subreaper), so not even a zombie is left.
func TestDeliveryEscapedGrandchildKilled(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "escape")
	s := g.createSession(nil)
	var res struct{ StopReason, Text string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"escape"}`, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %d %+v", code, res)
	}
	m := regexp.MustCompile(`escaped (\d+)`).FindStringSubmatch(res.Text)
	if m == nil {
		t.Fatalf("no escaped pid in %q", res.Text)
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("escaped process %d not running: %v", pid, err)
	}
	if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("close: %d", code)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the agent's setsid grandchild %d still exists after the session closed (kill 0: %v)", pid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
