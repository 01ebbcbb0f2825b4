package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTheOwnerChangesMCPServers: after a --data-dir restart ann's session is detached, so an `/acp`
// session/load or session/resume naming MCP servers would replace the ones its agent re-attaches with. From
// bob (a viewer) and carol (a collaborator) that is -32003, as changing the mode is; repeating what the session
// has (or naming none) changes nothing and is allowed. Ann's next prompt re-attaches with her own servers.
func TestOnlyTheOwnerChangesMCPServers(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users.json")
	writeUsersFile(t, users, testUser{"ann", "user"}, testUser{"bob", "user"}, testUser{"carol", "user"})
	// One workdir for both starts: a restart re-attaches only a cwd inside its own workspace roots.
	flags := []string{"--users", users, "--rate-limit", "0", "--data-dir", t.TempDir(), "--workdir", t.TempDir()}
	clientA := map[string]any{"type": "http", "name": "client-a", "url": "http://127.0.0.1:9/a",
		"headers": []any{map[string]string{"name": "X-Key", "value": secretClientHeader}}}
	evil := map[string]any{"type": "http", "name": "evil", "url": "http://127.0.0.1:9/evil", "headers": []any{}}

	g1 := mcpGateway(t, "http", flags...)
	body, _ := json.Marshal(map[string]any{"mcpServers": []any{clientA}})
	st, _, resp := g1.request("POST", "/v1/sessions", body, as("ann"))
	var s sessionJSON
	if err := json.Unmarshal([]byte(resp), &s); st != 201 || err != nil {
		t.Fatalf("create: %d %s", st, resp)
	}
	for who, role := range map[string]string{"bob": "viewer", "carol": "collaborator"} {
		if st, _, resp := g1.request("PUT", "/v1/sessions/"+s.ID+"/shares/"+who, []byte(`{"role":"`+role+`"}`), as("ann")); st != 200 {
			t.Fatalf("share with %s: %d %s", who, st, resp)
		}
	}
	if err := g1.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	g2 := mcpGateway(t, "http", flags...)
	for _, who := range []string{"bob", "carol"} {
		rc := dialACPAs(t, g2, as(who))
		for _, method := range []string{"session/load", "session/resume"} {
			for what, servers := range map[string][]any{"a new server": {evil}, "another list": {clientA, evil}} {
				r := rc.call(method, map[string]any{"sessionId": s.ID, "cwd": s.Cwd, "mcpServers": servers})
				if r.Error == nil || r.Error.Code != -32003 {
					t.Fatalf("%s: %s with %s: %+v, want -32003", who, method, what, r)
				}
			}
		}
		for what, servers := range map[string][]any{"none": {}, "the session's own": {clientA}} {
			if r := rc.call("session/load", map[string]any{"sessionId": s.ID, "cwd": s.Cwd, "mcpServers": servers}); r.Error != nil {
				t.Fatalf("%s: load naming %s: %+v", who, what, r.Error)
			}
		}
	}

	st, _, resp = g2.request("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", []byte(`{"text":"report"}`), as("ann"))
	var res struct{ Text string }
	var list []mcpReport
	if st != 200 || json.Unmarshal([]byte(resp), &res) != nil || json.Unmarshal([]byte(res.Text), &list) != nil {
		t.Fatalf("ann's prompt: %d %s", st, resp)
	}
	var names []string
	for _, m := range list {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, ","); got != "op-stdio,op-http,client-a" {
		t.Fatalf("the re-attached agent got %q, want ann's servers", got)
	}
}
