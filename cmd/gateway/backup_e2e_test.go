package main

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestDataDirBackupRestore is docs/deploy.md's backup: stop the gateway, copy its data dir, start a gateway
// on the copy (another path, as a restore on another machine would be); the session is there, detached, at
// the same sequence and epoch, and takes a prompt.
func TestDataDirBackupRestore(t *testing.T) {
	// One workdir for both starts: a restored session re-attaches only a cwd inside today's workspace roots.
	dir, workdir := t.TempDir(), t.TempDir()
	g1 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	s := g1.createSession(map[string]any{})
	var res struct {
		Status string `json:"status"`
	}
	if code := g1.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK || res.Status != "ended" {
		t.Fatalf("prompt: %d %+v", code, res)
	}
	if err := g1.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	var before sessionJSON
	backup := filepath.Join(t.TempDir(), "backup")
	copyTree(t, dir, backup)

	g2 := startGateway(t, "--data-dir", backup, "--workdir", workdir)
	if code := g2.do("GET", "/v1/sessions/"+s.ID, nil, &before); code != http.StatusOK || before.Status != "detached" || before.Epoch != s.Epoch || before.LastSeq == 0 {
		t.Fatalf("restored session: %d %+v", code, before)
	}
	if code := g2.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK || res.Status != "ended" {
		t.Fatalf("prompt on the restored copy: %d %+v", code, res)
	}
}

// copyTree copies a directory as `cp -a` would for regular files and directories, keeping modes.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(dst, info.Mode().Perm())
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, src); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}
