package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

type filesJSON struct {
	Files []struct {
		Path string `json:"path"`
		Rel  string `json:"rel"`
		Type string `json:"type"`
	} `json:"files"`
	Truncated bool `json:"truncated"`
}

func writeTree(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSessionFiles: GET /v1/sessions/{id}/files lists the cwd's files best match first, skips .git and
// node_modules, lists a FIFO not at all (and does not block on it), follows no symlink out of the cwd, and
// keeps to its limit.
func TestSessionFiles(t *testing.T) {
	workdir, outside := t.TempDir(), t.TempDir()
	writeTree(t, workdir, "src/main.go", "src/util/helper.go", "docs/main.md", "README.md", ".git/config", "node_modules/x/main.js", "deep/a/b/remain.txt")
	writeTree(t, outside, "secret.txt", "main.go")
	if err := syscall.Mkfifo(filepath.Join(workdir, "main.fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"main-out.txt": filepath.Join(outside, "secret.txt"), // a file outside
		"maindir-out":  outside,                              // a directory outside
		"main-in.md":   "README.md",                          // a file inside, linked relatively
		"main-fifo":    filepath.Join(workdir, "main.fifo"),  // a FIFO inside
	} {
		if err := os.Symlink(target, filepath.Join(workdir, link)); err != nil {
			t.Fatal(err)
		}
	}
	g := startGateway(t, "--workdir", workdir)
	s := g.createSession(map[string]any{})
	base := "/v1/sessions/" + s.ID + "/files"

	var res filesJSON
	if code := g.do("GET", base+"?q=MAIN", nil, &res); code != http.StatusOK {
		t.Fatalf("list: %d", code)
	}
	var rels []string
	for _, f := range res.Files {
		rels = append(rels, f.Rel)
		if !strings.HasPrefix(f.Path, s.Cwd+"/") || f.Path != filepath.Join(s.Cwd, f.Rel) {
			t.Errorf("entry %+v is not under the cwd %s", f, s.Cwd)
		}
	}
	want := []string{"main-in.md", "src/main.go", "docs/main.md", "deep/a/b/remain.txt"}
	if strings.Join(rels, " ") != strings.Join(want, " ") || res.Truncated {
		t.Fatalf("q=MAIN listed %q (truncated %v), want %q", rels, res.Truncated, want)
	}

	if code := g.do("GET", base, nil, &res); code != http.StatusOK {
		t.Fatalf("list all: %d", code)
	}
	types := map[string]string{}
	for _, f := range res.Files {
		types[f.Rel] = f.Type
	}
	for rel, typ := range map[string]string{"src": "dir", "README.md": "file", "src/util/helper.go": "file", "main-in.md": "file"} {
		if types[rel] != typ {
			t.Errorf("%s: type %q, want %q in %v", rel, types[rel], typ, types)
		}
	}
	for _, never := range []string{".git", ".git/config", "node_modules", "node_modules/x/main.js", "main.fifo", "main-fifo", "main-out.txt", "maindir-out", "maindir-out/main.go"} {
		if _, ok := types[never]; ok {
			t.Errorf("%s listed: %v", never, types)
		}
	}

	if code := g.do("GET", base+"?limit=2", nil, &res); code != http.StatusOK || len(res.Files) != 2 || !res.Truncated {
		t.Fatalf("limit=2: %d %+v", code, res)
	}
	for _, bad := range []string{"?limit=0", "?limit=201", "?limit=x", "?q=" + strings.Repeat("a", 257)} {
		st, code, body := g.request("GET", base+bad, nil, nil)
		if st != 400 || code != "bad_request" {
			t.Errorf("%s: %d %s %s, want 400 bad_request", bad, st, code, body)
		}
	}
	if st, code, _ := g.request("GET", "/v1/sessions/nope/files", nil, nil); st != 404 || code != "session_not_found" {
		t.Errorf("unknown session: %d %s", st, code)
	}
}

// TestSessionFilesRights: whoever may prompt may list; a viewer may not (403 forbidden), and a stranger does
// not see the session (404).
func TestSessionFilesRights(t *testing.T) {
	g, _ := startWithUsers(t)
	ann, bob, carol := as("ann"), as("bob"), as("root")
	_ = carol
	sid := g.createSessionWith(ann)
	path := "/v1/sessions/" + sid + "/files"
	check := func(what string, hdr map[string]string, wantStatus int, wantCode string) {
		t.Helper()
		if st, code, body := g.request("GET", path, nil, hdr); st != wantStatus || code != wantCode {
			t.Fatalf("%s: %d %q %s, want %d %q", what, st, code, body, wantStatus, wantCode)
		}
	}
	check("owner", ann, 200, "")
	check("stranger", bob, 404, "session_not_found")
	if st, _, body := g.request("PUT", "/v1/sessions/"+sid+"/shares/bob", []byte(`{"role":"viewer"}`), ann); st != 200 {
		t.Fatalf("share: %d %s", st, body)
	}
	check("viewer", bob, 403, "forbidden")
	if st, _, body := g.request("PUT", "/v1/sessions/"+sid+"/shares/bob", []byte(`{"role":"collaborator"}`), ann); st != 200 {
		t.Fatalf("share: %d %s", st, body)
	}
	check("collaborator", bob, 200, "")
}

// TestSessionRename: PATCH /v1/sessions/{id} {title} sets the title the detail and the list show, watchers see
// it as a session_info_update frame, bad titles and viewers are refused, and it survives a --data-dir restart.
func TestSessionRename(t *testing.T) {
	dir, workdir := t.TempDir(), t.TempDir()
	g := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	s := g.createSession(map[string]any{})
	path := "/v1/sessions/" + s.ID
	ws := g.dial(path + "/ws")
	for _, bad := range []string{`{}`, `{"title":"  "}`, `{"title":"a\u0007b"}`, `{"title":"` + strings.Repeat("é", 201) + `"}`} {
		if st, code, body := g.request("PATCH", path, []byte(bad), nil); st != 400 || code != "bad_request" {
			t.Errorf("%s: %d %s %s", bad, st, code, body)
		}
	}
	var res struct{ ID, Title string }
	if code := g.do("PATCH", path, `{"title":"  Fix the parser  "}`, &res); code != 200 || res.Title != "Fix the parser" || res.ID != s.ID {
		t.Fatalf("rename: %d %+v", code, res)
	}
	ws.waitFor("the title frame", func(f frame) bool {
		return f.updateKind() == "session_info_update" && strings.Contains(string(f.Params.Update), `"title":"Fix the parser"`)
	})
	titles := func(g *gateway) (detail, listed string) {
		var d struct{ Title string }
		g.do("GET", path, nil, &d)
		var l struct{ Sessions []struct{ ID, Title string } }
		g.do("GET", "/v1/sessions", nil, &l)
		for _, e := range l.Sessions {
			if e.ID == s.ID {
				listed = e.Title
			}
		}
		return d.Title, listed
	}
	if d, l := titles(g); d != "Fix the parser" || l != "Fix the parser" {
		t.Fatalf("detail %q, list %q", d, l)
	}
	if st, code, _ := g.request("PATCH", "/v1/sessions/nope", []byte(`{"title":"x"}`), nil); st != 404 || code != "session_not_found" {
		t.Errorf("unknown session: %d %s", st, code)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	g2 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	if d, l := titles(g2); d != "Fix the parser" || l != "Fix the parser" {
		t.Fatalf("after restart: detail %q, list %q", d, l)
	}
	var again struct{ Title string }
	if code := g2.do("PATCH", path, `{"title":"Second name"}`, &again); code != 200 {
		t.Fatalf("rename a detached session: %d", code)
	}
	if d, l := titles(g2); d != "Second name" || l != "Second name" {
		t.Fatalf("renamed detached: detail %q, list %q", d, l)
	}
	var f filesJSON
	if code := g2.do("GET", path+"/files", nil, &f); code != 200 {
		t.Fatalf("files of a detached session: %d", code)
	}
}

// TestSessionRenameRights: a collaborator may rename, a viewer may not.
func TestSessionRenameRights(t *testing.T) {
	g, _ := startWithUsers(t)
	ann, bob := as("ann"), as("bob")
	sid := g.createSessionWith(ann)
	path := "/v1/sessions/" + sid
	share := func(role string) {
		if st, _, body := g.request("PUT", path+"/shares/bob", []byte(`{"role":"`+role+`"}`), ann); st != 200 {
			t.Fatalf("share: %d %s", st, body)
		}
	}
	share("viewer")
	if st, code, _ := g.request("PATCH", path, []byte(`{"title":"x"}`), bob); st != 403 || code != "forbidden" {
		t.Fatalf("viewer renames: %d %s", st, code)
	}
	share("collaborator")
	st, _, body := g.request("PATCH", path, []byte(`{"title":"by bob"}`), bob)
	var res struct{ Title string }
	if st != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Title != "by bob" {
		t.Fatalf("collaborator renames: %d %s", st, body)
	}
}

// TestWorkspaceDirs: GET /v1/workspace/dirs lists the workspace roots, then the real directories under one
// (no files, symlinks, hidden directories, .git or node_modules), and refuses a path outside the roots or one
// that a symlink leads out of.
func TestWorkspaceDirs(t *testing.T) {
	workdir, outside := t.TempDir(), t.TempDir()
	writeTree(t, workdir, "projects/alpha/x", "projects/beta/x", ".hidden/x", "node_modules/x", "file.txt")
	if err := os.Symlink(outside, filepath.Join(workdir, "link-out")); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--workdir", workdir)
	real, _ := filepath.EvalSymlinks(workdir)
	type dirs struct {
		Roots   []string
		Default string
		Path    string
		Parent  string
		Dirs    []struct{ Path, Name string }
	}
	get := func(q string) dirs {
		t.Helper()
		var d dirs
		if code := g.do("GET", "/v1/workspace/dirs"+q, nil, &d); code != http.StatusOK {
			t.Fatalf("%s: %d", q, code)
		}
		return d
	}
	names := func(d dirs) string {
		var n []string
		for _, e := range d.Dirs {
			n = append(n, e.Name)
		}
		return strings.Join(n, " ")
	}
	if d := get(""); len(d.Roots) != 1 || d.Roots[0] != real || len(d.Dirs) != 1 || d.Dirs[0].Path != real {
		t.Fatalf("roots: %+v", d)
	}
	if d := get("?path=" + real); names(d) != "projects" || d.Parent != "" || d.Path != real {
		t.Fatalf("the root: %+v", d)
	}
	if d := get("?path=" + filepath.Join(real, "projects")); names(d) != "alpha beta" || d.Parent != real || d.Dirs[0].Path != filepath.Join(real, "projects", "alpha") {
		t.Fatalf("projects: %+v", d)
	}
	for q, want := range map[string]string{
		outside:                            "403 forbidden_cwd",
		filepath.Join(real, "link-out"):    "403 forbidden_cwd",
		filepath.Join(real, "..", "other"): "403 forbidden_cwd",
		"relative/path":                    "400 bad_request",
		filepath.Join(real, "file.txt"):    "400 bad_request",
		filepath.Join(real, "missing"):     "400 bad_request",
	} {
		st, code, body := g.request("GET", "/v1/workspace/dirs?path="+q, nil, nil)
		if got := fmt.Sprintf("%d %s", st, code); got != want {
			t.Errorf("%s: %s (%s), want %s", q, got, body, want)
		}
	}
}

// TestRenameCORS: a page of an allowed origin may rename (PATCH) and share (PUT): the preflight allows both.
func TestRenameCORS(t *testing.T) {
	g := startGateway(t, "--allowed-origins", "app.example")
	s := g.createSession(map[string]any{})
	for _, m := range []string{"PATCH", "PUT"} {
		pre := g.rawResponse("OPTIONS", "/v1/sessions/"+s.ID, map[string]string{"Origin": "http://app.example", "Access-Control-Request-Method": m})
		if allow := pre.Header.Get("Access-Control-Allow-Methods"); pre.StatusCode != http.StatusNoContent || !strings.Contains(allow, m) {
			t.Errorf("preflight for %s: %d, Allow-Methods %q", m, pre.StatusCode, allow)
		}
	}
}
