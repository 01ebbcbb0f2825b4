package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/sessions"
)

var (
	testAgentOnce sync.Once
	testAgentPath string
	testAgentErr  error
)

// testAgentBin builds internal/testagent once for the package.
func testAgentBin(t *testing.T) string {
	t.Helper()
	testAgentOnce.Do(func() {
		dir, err := os.MkdirTemp("", "httpapi-testagent-")
		if err != nil {
			testAgentErr = err
			return
		}
		testAgentPath = filepath.Join(dir, "testagent")
		if out, err := exec.Command("go", "build", "-o", testAgentPath, "github.com/acp-gateway/gateway/internal/testagent").CombinedOutput(); err != nil {
			testAgentErr = fmt.Errorf("building internal/testagent: %v\n%s", err, out)
		}
	})
	if testAgentErr != nil {
		t.Fatal(testAgentErr)
	}
	return testAgentPath
}

// reattachServer serves the REST face on a real HTTP server over a registry of three test agents (flood
// mode): "noload" advertises neither load nor resume, "failload" fails session/load, "ta" loads.
func reattachServer(t *testing.T, extra ...agents.Spec) (*sessions.Registry, string) {
	t.Helper()
	bin := testAgentBin(t)
	spec := func(name string, flags ...string) agents.Spec {
		return agents.Spec{Name: name, Kind: agents.KindACP, Command: bin, Args: append([]string{"-mode", "flood"}, flags...)}
	}
	logger := slog.New(slog.DiscardHandler)
	reg, err := sessions.NewRegistry(sessions.Config{Workdir: t.TempDir(), Logger: logger, StopGrace: 200 * time.Millisecond},
		append([]agents.Spec{spec("ta"), spec("noload", "-no-load"), spec("failload", "-fail-load")}, extra...), "ta")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&Server{Registry: reg, Logger: logger, Metrics: metrics.New(nil)}).Handler())
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = reg.Shutdown(ctx)
	})
	return reg, srv.URL
}

// call sends a JSON request and returns the status and the decoded body.
func call(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// TestPromptToDetachedSession: a prompt re-attaches a detached session (202); one whose agent can neither
// load nor resume gets 409 session_not_resumable and one whose agent fails the load 502 agent_error, and both
// stay detached with their transcript served.
func TestPromptToDetachedSession(t *testing.T) {
	reg, base := reattachServer(t)
	for _, tc := range []struct {
		agent, code string
		status      int
	}{
		{"ta", "", http.StatusOK},
		{"noload", "session_not_resumable", http.StatusConflict},
		{"failload", "agent_error", http.StatusBadGateway},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			st, created := call(t, "POST", base+"/v1/sessions", `{"agent":"`+tc.agent+`"}`)
			if st != http.StatusCreated {
				t.Fatalf("create: %d %v", st, created)
			}
			id := created["id"].(string)
			if st, p := call(t, "POST", base+"/v1/sessions/"+id+"/prompt?wait=true", `{"text":"1 4"}`); st != http.StatusOK {
				t.Fatalf("first prompt: %d %v", st, p)
			}
			if err := reg.Detach(id, "test"); err != nil {
				t.Fatal(err)
			}
			_, before := call(t, "GET", base+"/v1/sessions/"+id, "")
			if before["status"] != "detached" || before["snapshot"] == nil {
				t.Fatalf("detached session: status %v, snapshot %v", before["status"], before["snapshot"] != nil)
			}
			if st, p := call(t, "POST", base+"/v1/sessions/"+id+"/mode", `{"modeId":"x"}`); st != http.StatusConflict || p["code"] != "session_not_ready" {
				t.Errorf("set mode on a detached session: %d %v", st, p)
			}
			st, p := call(t, "POST", base+"/v1/sessions/"+id+"/prompt?wait=true", `{"text":"1 4"}`)
			if st != tc.status || (tc.code != "" && p["code"] != tc.code) {
				t.Fatalf("prompt: %d %v, want %d %q", st, p, tc.status, tc.code)
			}
			_, after := call(t, "GET", base+"/v1/sessions/"+id, "")
			if tc.code == "" {
				if after["status"] != "idle" || after["lastSeq"].(float64) <= before["lastSeq"].(float64) {
					t.Errorf("after re-attach: status %v, lastSeq %v (was %v)", after["status"], after["lastSeq"], before["lastSeq"])
				}
				return
			}
			if after["status"] != "detached" || after["lastSeq"] != before["lastSeq"] || after["snapshot"] == nil {
				t.Errorf("after the refused prompt: status %v, lastSeq %v (was %v)", after["status"], after["lastSeq"], before["lastSeq"])
			}
		})
	}
}

// TestReattachStartFailure: an agent whose binary is gone when a prompt re-attaches its session is
// `502 agent_start_failed` naming the agent, never the gateway's paths; the session stays detached.
func TestReattachStartFailure(t *testing.T) {
	link := filepath.Join(t.TempDir(), "vanishing-agent")
	if err := os.Symlink(testAgentBin(t), link); err != nil {
		t.Fatal(err)
	}
	reg, base := reattachServer(t, agents.Spec{Name: "gone", Kind: agents.KindACP, Command: link, Args: []string{"-mode", "flood"}})
	st, created := call(t, "POST", base+"/v1/sessions", `{"agent":"gone"}`)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, created)
	}
	id := created["id"].(string)
	if err := reg.Detach(id, "test"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	st, p := call(t, "POST", base+"/v1/sessions/"+id+"/prompt", `{"text":"1 1"}`)
	if st != http.StatusBadGateway || p["code"] != "agent_start_failed" || strings.Contains(fmt.Sprint(p["detail"]), link) {
		t.Fatalf("prompt: %d %v, want 502 agent_start_failed without the path", st, p)
	}
	if _, s := call(t, "GET", base+"/v1/sessions/"+id, ""); s["status"] != "detached" {
		t.Errorf("status after the failed re-attach = %v", s["status"])
	}
}
