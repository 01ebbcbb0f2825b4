package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// clusterRenameFiles: a rename and a file listing sent to a node that does not own the session are routed to
// the owner: the title is logged there (and this node's copy holds it when the answer comes), and the files are
// the owner's cwd's.
func clusterRenameFiles(t *testing.T, gws []*gateway) {
	a, b := gws[0], gws[1]
	s := a.createSession(map[string]any{})
	if err := os.WriteFile(filepath.Join(s.Cwd, "routed.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res struct{ Title string }
	if code := b.do("PATCH", "/v1/sessions/"+s.ID, `{"title":"Routed name"}`, &res); code != http.StatusOK || res.Title != "Routed name" {
		t.Fatalf("rename through b: %d %+v", code, res)
	}
	for _, g := range []*gateway{a, b} {
		var d struct{ Title string }
		if code := g.do("GET", "/v1/sessions/"+s.ID, nil, &d); code != http.StatusOK || d.Title != "Routed name" {
			t.Fatalf("%s: title %d %q", g.base, code, d.Title)
		}
	}
	var f filesJSON
	if code := b.do("GET", "/v1/sessions/"+s.ID+"/files?q=routed", nil, &f); code != http.StatusOK || len(f.Files) != 1 || f.Files[0].Path != filepath.Join(s.Cwd, "routed.txt") {
		t.Fatalf("files through b: %d %+v", code, f)
	}
}
