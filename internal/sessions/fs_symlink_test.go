package sessions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
)

// TestFSSymlinksStayInsideCwd: a symlink on an fs/* path is followed only while it stays inside the cwd. A
// dangling link to a file outside must not let a write create it there (the check used to look at the link's
// unresolved name and the write followed it), and neither may a link in a directory component; relative links
// that stay inside keep working.
func TestFSSymlinksStayInsideCwd(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{cwd, outside, filepath.Join(cwd, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(cwd, "sub", "in.txt"), []byte("inside"), 0o644))
	must(os.Symlink(filepath.Join(outside, "created"), filepath.Join(cwd, "dangling")))
	must(os.Symlink("../../outside/rel-created", filepath.Join(cwd, "sub", "dangling-rel")))
	must(os.Symlink("../../outside", filepath.Join(cwd, "sub", "up")))
	must(os.Symlink("sub", filepath.Join(cwd, "subLink")))
	must(os.Symlink("sub/fresh.txt", filepath.Join(cwd, "dangling-in")))
	must(os.Symlink(filepath.Join(cwd, "sub"), filepath.Join(cwd, "absLink")))

	r, err := NewRegistry(Config{Workdir: root}, []agents.Spec{fsSpec()}, "fs")
	must(err)
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	s, err := r.Create(context.Background(), CreateOptions{Cwd: cwd})
	must(err)
	script := strings.Join([]string{
		"write " + cwd + "/dangling x",
		"write " + cwd + "/sub/dangling-rel x",
		"write " + cwd + "/sub/up/pwned.txt x",
		"read " + cwd + "/dangling",
		"read " + cwd + "/subLink/in.txt",
		"write " + cwd + "/subLink/new.txt via-link",
		"write " + cwd + "/dangling-in fresh",
		"read " + cwd + "/sub/fresh.txt",
		"read " + cwd + "/absLink/in.txt",
	}, "\n")
	turn, err := s.Prompt(textPrompt(script))
	must(err)
	want := strings.Join([]string{
		"err -32602", "err -32602", "err -32602", "err -32602",
		`ok "inside"`, `ok ""`, `ok ""`, `ok "fresh"`,
		"err -32602", // os.Root refuses absolute links, even to inside
	}, "\n") + "\n"
	if got := turn.Result().Text; got != want {
		t.Fatalf("fs results:\n%s\nwant:\n%s", got, want)
	}
	entries, err := os.ReadDir(outside)
	must(err)
	for _, e := range entries {
		t.Errorf("a write escaped the cwd: %s", filepath.Join(outside, e.Name()))
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "sub", "new.txt")); err != nil || string(b) != "via-link" {
		t.Fatalf("write through an inside link: %q %v", b, err)
	}
	rr, _ := s.Log().Read(0, 1000, nil)
	for _, e := range rr.Entries {
		if strings.Contains(string(e.Frame), `"_gateway/fs_write"`) && strings.Contains(string(e.Frame), "dangling\"") {
			t.Errorf("refused write logged: %s", e.Frame)
		}
	}
}

// TestFSKeepsToTheCwdItWasGiven: fs/* keeps to the directory the session was made with, even when that
// directory's path is later swapped for a symlink to somewhere else (the cwd is opened once, not by path on
// every request).
func TestFSKeepsToTheCwdItWasGiven(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{cwd, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewRegistry(Config{Workdir: root}, []agents.Spec{fsSpec()}, "fs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	s, err := r.Create(context.Background(), CreateOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(root, "proj-moved")
	if err := os.Rename(cwd, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, cwd); err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(textPrompt("write " + cwd + "/pwned.txt x"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Result()
	if _, err := os.Stat(filepath.Join(outside, "pwned.txt")); err == nil {
		t.Fatal("a write went through the swapped cwd path to the directory it now points at")
	}
	if b, err := os.ReadFile(filepath.Join(moved, "pwned.txt")); err != nil || string(b) != "x" {
		t.Fatalf("the session's own directory lacks the write: %q %v", b, err)
	}
}
