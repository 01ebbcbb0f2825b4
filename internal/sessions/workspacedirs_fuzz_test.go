package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// quotedPathBound is agentsvc's bound on the bytes of a path an error quotes.
const quotedPathBound = 256

// FuzzWorkspaceDirs feeds arbitrary paths to the cwd picker's listing over a workspace with a symlink that
// leads out: it refuses with ErrBadRequest or ErrForbiddenCwd, or lists real directories inside a root,
// never the outside directory's.
func FuzzWorkspaceDirs(f *testing.F) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "sub", "deep"), filepath.Join(ws, ".hidden"), filepath.Join(outside, "secret")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, strings.Repeat("f", 255)), nil, 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "file"), nil, 0o600); err != nil {
		f.Fatal(err)
	}
	for link, target := range map[string]string{"escape": outside, "inner": filepath.Join(ws, "sub"), "dangling": filepath.Join(ws, "nope")} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			f.Fatal(err)
		}
	}
	r, err := NewRegistry(Config{Workdir: ws, WorkspaceRoots: []string{ws}}, []agents.Spec{{Name: "none", Kind: agents.KindACP, Command: "/nonexistent"}}, "none")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{"", "/", ws, ws + "/", ws + "/sub", ws + "/sub/../..", ws + "/../outside", ws + "/escape", ws + "/escape/secret",
		ws + "/inner", ws + "/inner/deep", ws + "/dangling", ws + "/file", ws + "/\x00", "sub", "./" + ws, ws + "/.hidden", ws + "//sub/./deep", outside, ws + "/" + strings.Repeat("f", 255)} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if strings.HasPrefix(path, ws) && len(path) > len(ws)+256 {
			t.Skip() // long names are the kernel's ENAMETOOLONG, not the check's
		}
		res, err := r.WorkspaceDirs(path)
		if err != nil {
			if !errors.Is(err, sessionerr.ErrBadRequest) && !errors.Is(err, sessionerr.ErrForbiddenCwd) {
				t.Fatalf("path %q: error %v is neither ErrBadRequest nor ErrForbiddenCwd", path, err)
			}
			if len(err.Error()) > 4*quotedPathBound+128 { // a quoted byte takes up to 4 ("\x00")
				t.Fatalf("a %d-byte error quotes the whole path", len(err.Error()))
			}
			return
		}
		if path != "" && !agentsvc.Within(ws, res.Path) {
			t.Fatalf("path %q listed %q, outside the root", path, res.Path)
		}
		for _, d := range res.Dirs {
			real, err := filepath.EvalSymlinks(d.Path)
			if err != nil || !agentsvc.Within(ws, real) || strings.HasPrefix(d.Name, ".") || d.Name == "escape" {
				t.Fatalf("path %q listed %+v (real %q, %v)", path, d, real, err)
			}
			if fi, err := os.Lstat(d.Path); err != nil || !fi.IsDir() {
				t.Fatalf("path %q listed %q, not a real directory", path, d.Path)
			}
		}
	})
}
