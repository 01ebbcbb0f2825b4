package httpapi

import (
	"bufio"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/go-chi/chi/v5"
)

// TestOpenAPIMatchesRouter keeps openapi.yaml equal to the router: every route is documented, and every
// documented path and method exists. The static UI catch-all is not part of the API.
func TestOpenAPIMatchesRouter(t *testing.T) {
	s := &Server{Metrics: metrics.New(nil)}
	router, ok := s.Handler().(chi.Routes)
	if !ok {
		t.Fatal("handler is not a chi router")
	}
	var routed []string
	err := chi.Walk(router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if route == "/*" {
			return nil
		}
		if len(route) > 1 {
			route = strings.TrimSuffix(route, "/")
		}
		// A trailing wildcard (a login callback's path) is documented as a {path} parameter.
		if r, ok := strings.CutSuffix(route, "/*"); ok {
			route = r + "/{path}"
		}
		routed = append(routed, strings.ToLower(method)+" "+route)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := openAPIOperations(t, "../../openapi.yaml")
	slices.Sort(routed)
	routed = slices.Compact(routed)
	for _, r := range routed {
		if !slices.Contains(documented, r) {
			t.Errorf("route %q is not in openapi.yaml", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routed, d) {
			t.Errorf("openapi.yaml documents %q, which the router does not serve", d)
		}
	}
}

// openAPIOperations lists "method path" for every operation under `paths:` (two-space path keys, four-space
// method keys).
func openAPIOperations(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ops []string
	inPaths, path := false, ""
	methods := []string{"get", "put", "post", "delete", "patch", "head", "options"}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "paths:":
			inPaths = true
		case inPaths && len(line) > 0 && line[0] != ' ' && line[0] != '#':
			inPaths = false
		case inPaths && strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":"):
			path = strings.Trim(strings.TrimSpace(strings.TrimSuffix(line, ":")), `"'`)
		case inPaths && path != "" && strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     "):
			m := strings.TrimSuffix(strings.TrimSpace(line), ":")
			if slices.Contains(methods, m) {
				ops = append(ops, m+" "+path)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// TestPatternMatches is the route matching behind the Allow header of a 405.
func TestPatternMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"/v1/sessions/{id}/", "/v1/sessions/abc", true},
		{"/v1/sessions/{id}/prompt", "/v1/sessions/abc/prompt", true},
		{"/v1/sessions/{id}/prompt", "/v1/sessions//prompt", false},
		{"/v1/sessions", "/v1/sessions/abc", false},
		{"/acp/{agent}", "/acp/demo", true},
	} {
		if got := patternMatches(c.pattern, c.path); got != c.want {
			t.Errorf("patternMatches(%q, %q) = %v", c.pattern, c.path, got)
		}
	}
}
