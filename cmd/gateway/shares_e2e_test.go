package main

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestSharingRoles: ann shares her session with bob as a viewer (he sees and streams it but cannot prompt,
// answer, change it or share it), then as a collaborator (he may prompt and answer, still not change the mode
// or close it), then stops sharing (it is gone for him again).
func TestSharingRoles(t *testing.T) {
	cwd := t.TempDir()
	g, _ := startWithUsers(t, "--workdir", cwd)
	ann, bob := as("ann"), as("bob")
	sid := g.createSessionWith(ann)
	shares := "/v1/sessions/" + sid + "/shares/bob"
	expect := func(what, method, path, body string, hdr map[string]string, wantStatus int, wantCode string) string {
		t.Helper()
		st, code, resp := g.request(method, path, []byte(body), hdr)
		if st != wantStatus || code != wantCode {
			t.Fatalf("%s: %d %q %s, want %d %q", what, st, code, resp, wantStatus, wantCode)
		}
		return resp
	}
	expect("bob before sharing", "GET", "/v1/sessions/"+sid, "", bob, 404, "session_not_found")
	expect("bob shares ann's session", "PUT", shares, `{"role":"viewer"}`, bob, 404, "session_not_found")
	expect("a bad role", "PUT", shares, `{"role":"owner"}`, ann, 400, "bad_request")
	expect("ann shares as viewer", "PUT", shares, `{"role":"viewer"}`, ann, 200, "")

	// A viewer watches.
	expect("viewer reads", "GET", "/v1/sessions/"+sid, "", bob, 200, "")
	_, _, list := g.request("GET", "/v1/sessions", nil, bob)
	if !slices.Contains(listedIDs(t, list), sid) {
		t.Fatalf("the viewer's list misses the session: %s", list)
	}
	resp := expect("viewer lists shares", "GET", "/v1/sessions/"+sid+"/shares", "", bob, 200, "")
	var sh struct {
		Owner  struct{ Principal string }
		Shares []struct{ Principal, Role string }
	}
	if json.Unmarshal([]byte(resp), &sh) != nil || sh.Owner.Principal != "ann" || len(sh.Shares) != 1 || sh.Shares[0].Principal != "bob" || sh.Shares[0].Role != "viewer" {
		t.Fatalf("shares: %s", resp)
	}
	bobWS := g.dialAs("/v1/sessions/"+sid+"/ws", bob)
	var started struct{ TurnID string }
	_ = json.Unmarshal([]byte(expect("owner prompts", "POST", "/v1/sessions/"+sid+"/prompt", `{"text":"edit please"}`, ann, 202, "")), &started)
	perm, _ := bobWS.waitFor("the permission request on the viewer's socket", isPermissionRequest)
	// ... but may not act.
	expect("viewer prompts", "POST", "/v1/sessions/"+sid+"/prompt", `{"text":"hi"}`, bob, 403, "forbidden")
	expect("viewer cancels", "POST", "/v1/sessions/"+sid+"/cancel", "", bob, 403, "forbidden")
	expect("viewer answers", "POST", "/v1/sessions/"+sid+"/permissions/"+permIDOf(perm), `{"optionId":"allow-once"}`, bob, 403, "forbidden")
	bobWS.send(map[string]any{"jsonrpc": "2.0", "id": permIDOf(perm), "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
	bobWS.waitFor("the viewer's answer refused on the socket", func(f frame) bool { return f.Error != nil && f.Error.Code == -32003 })
	rc := dialACPAs(t, g, bob)
	if r := rc.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); r.Error != nil {
		t.Fatalf("viewer loads over /acp: %+v", r.Error)
	}
	if r := rc.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "x"}); r.Error == nil || r.Error.Code != -32003 {
		t.Fatalf("viewer sets the mode over /acp: %+v", r)
	}

	// A collaborator acts, but only the owner changes the session itself.
	expect("ann makes bob a collaborator", "PUT", shares, `{"role":"collaborator"}`, ann, 200, "")
	expect("collaborator answers", "POST", "/v1/sessions/"+sid+"/permissions/"+permIDOf(perm), `{"optionId":"allow-once"}`, bob, 200, "")
	res, _ := bobWS.waitFor("permission_resolved", resolvedFor(permIDOf(perm)))
	if by, who, _ := actorOf(t, res); by != "rest" || who != "bob" {
		t.Fatalf("the collaborator's answer: %s", res.Raw)
	}
	bobWS.waitFor("turn_ended", turnEnded(started.TurnID))
	expect("collaborator prompts", "POST", "/v1/sessions/"+sid+"/prompt?wait=true", `{"text":"quick"}`, bob, 200, "")
	expect("collaborator sets the mode", "POST", "/v1/sessions/"+sid+"/mode", `{"modeId":"x"}`, bob, 403, "forbidden")
	expect("collaborator shares on", "PUT", "/v1/sessions/"+sid+"/shares/carol", `{"role":"viewer"}`, bob, 403, "forbidden")
	expect("collaborator closes", "DELETE", "/v1/sessions/"+sid, "", bob, 403, "forbidden")

	// Unshared, the session is gone for bob again.
	expect("ann stops sharing", "DELETE", shares, "", ann, 204, "")
	expect("bob after unsharing", "GET", "/v1/sessions/"+sid, "", bob, 404, "session_not_found")
	if !containsAuditLine(g.logs.String(), "share", "ann") || !containsAuditLine(g.logs.String(), "unshare", "ann") {
		t.Fatalf("no share/unshare audit lines:\n%s", g.logs.String())
	}
}
