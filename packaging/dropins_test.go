package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocDropIns: every drop-in docs/deploy.md shows (its ```ini blocks, for systemctl edit) passes
// systemd-analyze verify on top of the shipped unit, without a warning: a misspelt key would be ignored by
// systemd in silence.
func TestDocDropIns(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian: apt-get install systemd); the drop-ins are not verified")
	}
	raw, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	unit, err := os.ReadFile("acp-gateway.service")
	if err != nil {
		t.Fatal(err)
	}
	// verify insists that the command exists; the unit is otherwise as shipped.
	unit = bytes.Replace(unit, []byte("ExecStart=/usr/bin/acp-gateway"), []byte("ExecStart=/bin/true"), 1)
	blocks := 0
	for _, part := range strings.Split(string(raw), "\n```ini")[1:] {
		info, rest, _ := strings.Cut(part, "\n")
		dropin, _, ok := strings.Cut(rest, "\n```\n")
		if !ok {
			t.Fatalf("deploy.md: the ```ini%s block does not end", info)
		}
		blocks++
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "acp-gateway.service"), unit, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "acp-gateway.service.d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "acp-gateway.service.d", "override.conf"), []byte(dropin+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(analyze, "verify", filepath.Join(dir, "acp-gateway.service")).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("deploy.md's drop-in:\n%s\nsystemd-analyze verify: %v\n%s", dropin, err, out)
		}
	}
	if blocks < 3 {
		t.Fatalf("found %d drop-ins in deploy.md, want §2's, §6's and §9's", blocks)
	}
}
