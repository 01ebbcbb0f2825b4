package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// permissionResolvers is every `by` of `_gateway/permission_resolved` the gateway writes
// (internal/sessions, the faces' answers).
var permissionResolvers = []string{"client", "rest", "acp", "policy", "cancel", "deadline", "turn_ended", "close",
	"detach", "agent_exit", "agent", "restart", "node_lost"}

// TestDocsNamePermissionResolvers: the lists of permission_resolved.by values in docs/rest.md and
// docs/websocket.md name every value the gateway writes.
func TestDocsNamePermissionResolvers(t *testing.T) {
	for _, doc := range []string{"../../docs/rest.md", "../../docs/websocket.md"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		// The paragraph that lists them: from "permission_resolved {permissionId" to the next blank line.
		text := string(raw)
		i := strings.Index(text, "_gateway/permission_resolved {permissionId")
		if i < 0 {
			t.Fatalf("%s: no permission_resolved paragraph", doc)
		}
		para, _, _ := strings.Cut(text[i:], "\n\n")
		for _, by := range permissionResolvers {
			if !strings.Contains(para, "`"+by+"`") {
				t.Errorf("%s: the permission_resolved paragraph does not name `%s`", doc, by)
			}
		}
	}
}

// TestUnknownRoutesAsDocumented: docs/rest.md's route_not_found row. Under /v1/ any method gets
// 404 route_not_found; elsewhere an unknown GET is the UI's file server's 404 and another method a 405.
func TestUnknownRoutesAsDocumented(t *testing.T) {
	g := startGateway(t)
	cases := []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v1/nope", 404, "route_not_found"},
		{"POST", "/v1/sessions/x/nope", 404, "route_not_found"},
		{"GET", "/nope", 404, ""},
		{"POST", "/nope", 405, "method_not_allowed"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, g.base+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		isProblem := resp.Header.Get("Content-Type") == "application/problem+json"
		if resp.StatusCode != c.status || isProblem != (c.code != "") {
			t.Errorf("%s %s: %d %s, want %d (code %q)", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.status, c.code)
		}
		if c.code != "" {
			var p problemJSON
			if g.do(c.method, c.path, nil, &p); p.Code != c.code {
				t.Errorf("%s %s: code %q, want %q", c.method, c.path, p.Code, c.code)
			}
		}
	}
}
