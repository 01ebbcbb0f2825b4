package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A restart trusts nothing it stored: a cwd swapped for a symlink while the gateway was
// down is not re-attached, and a damaged block of the store is cut and reported instead of ending the start-up.

// TestDataDirRestartRefusesASwappedCwd: the session's cwd replaced by a symlink to / between two starts; the
// prompt that would re-attach it is 403 forbidden_cwd, and the session says why.
func TestDataDirRestartRefusesASwappedCwd(t *testing.T) {
	dir, workdir := t.TempDir(), t.TempDir()
	cwd := filepath.Join(workdir, "proj")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	g1 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	s := g1.createSession(map[string]any{"cwd": cwd})
	if err := g1.stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(cwd); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", cwd); err != nil {
		t.Fatal(err)
	}
	g2 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	var p problemJSON
	if code := g2.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"cat /etc/hostname"}]}`, &p); code != http.StatusForbidden || p.Code != "forbidden_cwd" {
		t.Fatalf("prompt re-attaching a swapped cwd: %d %+v", code, p)
	}
	var v struct {
		Status       string `json:"status"`
		StatusReason string `json:"statusReason"`
	}
	if code := g2.do("GET", "/v1/sessions/"+s.ID, nil, &v); code != http.StatusOK || v.Status != "detached" || !strings.HasPrefix(v.StatusReason, "re-attach refused: ") {
		t.Fatalf("session after the refusal: %d %+v", code, v)
	}
}

// TestDataDirDamagedLogBlock: one flipped bit in the middle of the log's block between two starts. The second
// start logs the cut at ERROR, still lists the session, serves it, and a prompt re-attaches it.
func TestDataDirDamagedLogBlock(t *testing.T) {
	dir, workdir := t.TempDir(), t.TempDir()
	g1 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	s := g1.createSession(map[string]any{})
	var res struct {
		Status string `json:"status"`
	}
	for range 3 {
		if code := g1.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK || res.Status != "ended" {
			t.Fatalf("prompt: %d %+v", code, res)
		}
	}
	if err := g1.stop(); err != nil {
		t.Fatal(err)
	}
	blocks, _ := filepath.Glob(filepath.Join(dir, "jetstream", "*", "streams", "acpgw-log", "msgs", "*.blk"))
	if len(blocks) != 1 {
		t.Fatalf("log blocks: %v", blocks)
	}
	b, err := os.ReadFile(blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x04
	if err := os.WriteFile(blocks[0], b, 0o600); err != nil {
		t.Fatal(err)
	}

	g2 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	if logs := g2.logs.String(); !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "a damaged store block was cut") {
		t.Fatalf("the cut is not reported:\n%s", logs)
	}
	var list struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if code := g2.do("GET", "/v1/sessions", nil, &list); code != http.StatusOK || len(list.Sessions) != 1 || list.Sessions[0].ID != s.ID {
		t.Fatalf("list after the cut: %d %+v", code, list)
	}
	if code := g2.do("GET", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusOK {
		t.Fatalf("detail after the cut: %d\n%s", code, g2.logs.String())
	}
	if code := g2.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK || res.Status != "ended" {
		t.Fatalf("prompt after the cut: %d %+v\n%s", code, res, g2.logs.String())
	}
}
