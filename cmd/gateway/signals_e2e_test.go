package main

import (
	"net/http"
	"syscall"
	"testing"
)

// TestSIGHUPWithNothingToReloadKeepsServing: a service manager's reload (SIGHUP) of a gateway without
// --users or --tls-cert changes nothing; it stopped the gateway, which systemd then counted as a clean exit.
func TestSIGHUPWithNothingToReloadKeepsServing(t *testing.T) {
	g, cmd, exited := startChildGateway(t)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// A turn spans the signal's delivery: a prompt that answers after it was sent is served by the same process.
	s := g.createSession(map[string]any{})
	var res struct {
		Status string `json:"status"`
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK || res.Status != "ended" {
		t.Fatalf("prompt after SIGHUP: %d %+v\n%s", code, res, g.logs.String())
	}
	select {
	case <-exited:
		t.Fatalf("the gateway exited on SIGHUP:\n%s", g.logs.String())
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-exited
	if !cmd.ProcessState.Success() {
		t.Fatalf("SIGTERM after SIGHUP: %v\n%s", cmd.ProcessState, g.logs.String())
	}
}
