package sessions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
)

// TestWorkspaceDirsListsTheDefault: the default cwd the listing answers can itself be listed, also when the
// workdir is reached through a symlink (roots are answered resolved, and so is the default).
func TestWorkspaceDirsListsTheDefault(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, link := filepath.Join(base, "ws"), filepath.Join(base, "link")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(Config{Workdir: link}, []agents.Spec{{Name: "none", Kind: agents.KindACP, Command: "/nonexistent"}}, "none")
	if err != nil {
		t.Fatal(err)
	}
	top, err := r.WorkspaceDirs("")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.WorkspaceDirs(top.Default)
	if err != nil {
		t.Fatalf("listing the default %q (roots %v): %v", top.Default, top.Roots, err)
	}
	if len(res.Dirs) != 1 || res.Dirs[0].Name != "sub" {
		t.Fatalf("default lists %+v", res.Dirs)
	}
}
