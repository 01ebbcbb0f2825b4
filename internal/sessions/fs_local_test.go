package sessions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	acp "github.com/coder/acp-go-sdk"
)

// refusingDelegate fails every fs/* call and counts them: ServeFSLocally must never reach it.
type refusingDelegate struct{ calls atomic.Int32 }

func (d *refusingDelegate) ReadTextFile(context.Context, json.RawMessage) (any, *acp.RequestError) {
	d.calls.Add(1)
	return nil, acp.NewInternalError(map[string]any{"error": "delegate"})
}

func (d *refusingDelegate) WriteTextFile(context.Context, json.RawMessage) (any, *acp.RequestError) {
	d.calls.Add(1)
	return nil, acp.NewInternalError(map[string]any{"error": "delegate"})
}

// TestServeFSLocallyMatchesGateway: ServeFSLocally answers exactly what the gateway answers with no delegate
// (confinement, errors, line selection, writes logged), and ignores a registered delegate.
func TestServeFSLocallyMatchesGateway(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	sibling := filepath.Join(root, "other")
	for _, d := range []string{cwd, sibling, filepath.Join(cwd, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sibling, filepath.Join(cwd, "out")); err != nil {
		t.Fatal(err)
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
	read, write := acp.ClientMethodFsReadTextFile, acp.ClientMethodFsWriteTextFile
	cases := []struct{ method, params string }{
		{read, `{"sessionId":"x","path":"` + cwd + `/a.txt"}`},
		{read, `{"sessionId":"x","path":"` + cwd + `/a.txt","line":2,"limit":1}`},
		{read, `{"sessionId":"x","path":"` + cwd + `/a.txt","line":0}`},
		{read, `{"sessionId":"x","path":"a.txt"}`},
		{read, `{"sessionId":"x","path":"` + cwd + `/missing.txt"}`},
		{read, `{"sessionId":"x","path":"` + cwd + `/sub"}`},
		{read, `{"sessionId":"x","path":"` + cwd + `/out/x.txt"}`},
		{read, `{"path":7}`},
		{write, `{"sessionId":"x","path":"` + cwd + `/sub/new.txt","content":"hello"}`},
		{write, `{"sessionId":"x","path":"` + cwd + `/out/pwned.txt","content":"x"}`},
		{write, `{"sessionId":"x","path":"` + cwd + `/sub"}`},
		{write, `{"sessionId":"x","path":"` + cwd + `/sub","content":"x"}`},
	}
	encode := func(res any, rerr *acp.RequestError) string {
		b, _ := json.Marshal(map[string]any{"result": res, "error": rerr})
		return string(b)
	}
	gateway := make([]string, len(cases))
	for i, c := range cases {
		if c.method == read {
			gateway[i] = encode(s.ReadTextFile(context.Background(), json.RawMessage(c.params)))
		} else {
			gateway[i] = encode(s.WriteTextFile(context.Background(), json.RawMessage(c.params)))
		}
	}
	d := &refusingDelegate{}
	release := s.DelegateFS(principal.Principal{}, d)
	defer release()
	for i, c := range cases {
		if got := encode(s.ServeFSLocally(context.Background(), c.method, json.RawMessage(c.params))); got != gateway[i] {
			t.Errorf("%s %s:\n local   %s\n gateway %s", c.method, c.params, got, gateway[i])
		}
	}
	if n := d.calls.Load(); n != 0 {
		t.Fatalf("ServeFSLocally reached the delegate %d times", n)
	}
	if _, rerr := s.ServeFSLocally(context.Background(), "terminal/create", json.RawMessage(`{}`)); rerr == nil || rerr.Code != -32601 {
		t.Fatalf("unknown method: %v", rerr)
	}
	if _, err := os.Stat(filepath.Join(sibling, "pwned.txt")); err == nil {
		t.Fatal("a write escaped through a symlinked directory")
	}
	rr, _ := s.Log().Read(0, 1000, nil)
	writes := 0
	for _, e := range rr.Entries {
		if strings.Contains(string(e.Frame), `"_gateway/fs_write"`) && strings.Contains(string(e.Frame), "new.txt") {
			writes++
		}
	}
	if writes != 2 {
		t.Fatalf("_gateway/fs_write frames for new.txt: %d, want 2 (gateway and local)", writes)
	}
}
