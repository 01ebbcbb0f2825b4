package termlogin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/confine"
)

// TestLoginConfinedToItsPrincipalsHome: a login runs confined as its agent does, with its principal's HOME
// only: Bob's HOME (a sibling under the same root) is out of its reach, its own is writable.
func TestLoginConfinedToItsPrincipalsHome(t *testing.T) {
	root := t.TempDir()
	cf, err := confine.New(confine.Options{Shared: []string{root}, TmpRoot: t.TempDir()})
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	spec := agents.Spec{Name: "ta", Kind: agents.KindACP, Command: testAgent, Args: []string{"-mode", "login"},
		Home: agents.HomePerPrincipal}
	spec.SetHomeRoot(root)
	bobHome := spec.ForPrincipal(bob.ID).Env["HOME"]
	annHome := spec.ForPrincipal(ann.ID).Env["HOME"]
	if err := os.MkdirAll(bobHome, 0o700); err != nil {
		t.Fatal(err)
	}
	bobSecret := filepath.Join(bobHome, ".testagent-credential")
	if err := os.WriteFile(bobSecret, []byte("bob's token"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A method whose command tries to read Bob's credential and write into Ann's HOME.
	methods, _ := json.Marshal([]map[string]any{{"id": "peek", "name": "peek", "type": "terminal",
		"args": []string{"-read", bobSecret, "-write", filepath.Join(annHome, "mine")}}})
	m := New(Config{
		Specs:       []agents.Spec{spec},
		AuthMethods: func(context.Context, string) (json.RawMessage, bool) { return methods, true },
		Env:         []string{"PATH=" + os.Getenv("PATH")}, Confiner: cf, Workdir: t.TempDir(),
	})
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	l, err := m.Start(context.Background(), ann, "ta", "peek", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out, exit := readUntil(t, l, "")
	if exit == nil {
		t.Fatal("no exit")
	}
	if !strings.Contains(out, "denied "+bobSecret) || strings.Contains(out, "bob's token") {
		t.Errorf("ann's login read bob's HOME:\n%s", out)
	}
	if !strings.Contains(out, "ok "+filepath.Join(annHome, "mine")) {
		t.Errorf("ann's login could not write her own HOME:\n%s", out)
	}
}
