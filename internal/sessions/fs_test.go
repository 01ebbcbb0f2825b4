package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	acp "github.com/coder/acp-go-sdk"
)

// fsAgent runs the fs/* calls its prompt names ("read PATH", "readlines PATH LINE LIMIT", "write PATH TEXT")
// against the gateway and answers with one line per call: "ok <content>" or "err <code>".
type fsAgent struct {
	acp.Agent
	conn *acp.AgentSideConnection
}

func (a *fsAgent) Initialize(_ context.Context, r acp.InitializeRequest) (acp.InitializeResponse, error) {
	if !r.ClientCapabilities.Fs.ReadTextFile || !r.ClientCapabilities.Fs.WriteTextFile {
		return acp.InitializeResponse{}, errors.New("gateway did not advertise fs")
	}
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *fsAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: "fs"}, nil
}

func (a *fsAgent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *fsAgent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	var out strings.Builder
	for _, line := range strings.Split(p.Prompt[0].Text.Text, "\n") {
		f := strings.SplitN(line, " ", 4)
		var content string
		var err error
		switch f[0] {
		case "read":
			var r acp.ReadTextFileResponse
			r, err = a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: p.SessionId, Path: f[1]})
			content = r.Content
		case "readlines":
			var line, limit int
			fmt.Sscan(f[2], &line)
			fmt.Sscan(f[3], &limit)
			var r acp.ReadTextFileResponse
			r, err = a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: p.SessionId, Path: f[1], Line: &line, Limit: &limit})
			content = r.Content
		case "write":
			_, err = a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: p.SessionId, Path: f[1], Content: f[2]})
		}
		var re *acp.RequestError
		switch {
		case errors.As(err, &re):
			fmt.Fprintf(&out, "err %d\n", re.Code)
		case err != nil:
			fmt.Fprintf(&out, "err %v\n", err)
		default:
			fmt.Fprintf(&out, "ok %q\n", content)
		}
	}
	_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: acp.UpdateAgentMessageText(out.String())})
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func fsSpec() agents.Spec {
	return agents.Spec{Name: "fs", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		a := &fsAgent{}
		ready := make(chan struct{})
		a.conn = acp.NewAgentSideConnection(a, out, gatedReader{in, ready})
		close(ready)
		select {
		case <-a.conn.Done():
		case <-ctx.Done():
		}
		_ = gatedReader{in, ready}.Close()
		<-a.conn.Done()
		return nil
	}}
}

// TestFSConfinedToCwd: the gateway serves fs/* inside the session cwd, refuses relative paths, `..`, sibling
// prefixes and symlink escapes, and logs writes for clients.
func TestFSConfinedToCwd(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	sibling := filepath.Join(root, "proj-other")
	for _, d := range []string{cwd, sibling, filepath.Join(cwd, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644))
	must(os.WriteFile(filepath.Join(sibling, "secret.txt"), []byte("secret"), 0o644))
	must(os.Symlink(filepath.Join(sibling, "secret.txt"), filepath.Join(cwd, "link.txt")))
	must(os.Symlink(sibling, filepath.Join(cwd, "linkdir")))

	r, err := NewRegistry(Config{Workdir: root}, []agents.Spec{fsSpec()}, "fs")
	must(err)
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	s, err := r.Create(context.Background(), CreateOptions{Cwd: cwd})
	must(err)
	script := strings.Join([]string{
		"read " + cwd + "/a.txt",
		"readlines " + cwd + "/a.txt 2 1",
		"read a.txt",
		"read " + cwd + "/../proj-other/secret.txt",
		"read " + sibling + "/secret.txt",
		"read " + cwd + "/link.txt",
		"read " + cwd + "/linkdir/secret.txt",
		"read " + cwd + "/missing.txt",
		"write " + cwd + "/sub/new.txt hello",
		"write " + cwd + "/linkdir/pwned.txt x",
		"write " + cwd + "/nodir/x.txt x",
	}, "\n")
	turn, err := s.Prompt(textPrompt(script))
	must(err)
	res := turn.Result()
	want := strings.Join([]string{
		`ok "one\ntwo\nthree\n"`,
		`ok "two\n"`,
		"err -32602", "err -32602", "err -32602", "err -32602", "err -32602",
		"err -32002",
		`ok ""`,
		"err -32602", "err -32602",
	}, "\n") + "\n"
	if res.Text != want {
		t.Fatalf("fs results:\n%s\nwant:\n%s", res.Text, want)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "sub", "new.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("written file: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(sibling, "pwned.txt")); err == nil {
		t.Fatal("a write escaped through a symlinked directory")
	}
	rr, _ := s.Log().Read(0, 1000, nil)
	found := false
	for _, e := range rr.Entries {
		found = found || strings.Contains(string(e.Frame), `"_gateway/fs_write"`) && strings.Contains(string(e.Frame), "new.txt")
	}
	if !found {
		t.Fatal("no _gateway/fs_write frame")
	}
}

type fakeEditor struct{ gotSession string }

func (f *fakeEditor) ReadTextFile(_ context.Context, params json.RawMessage) (any, *acp.RequestError) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p)
	f.gotSession = p.SessionID
	return map[string]string{"content": "unsaved buffer"}, nil
}

func (f *fakeEditor) WriteTextFile(context.Context, json.RawMessage) (any, *acp.RequestError) {
	return nil, acp.NewInvalidParams(map[string]any{"error": "read-only editor"})
}

// TestFSDelegate: while an editor is registered, fs/* goes to it (with the gateway's session id); after
// release, the gateway serves again.
func TestFSDelegate(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("on disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(Config{Workdir: cwd}, []agents.Spec{fsSpec()}, "fs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ed := &fakeEditor{}
	release := s.DelegateFS(principal.Principal{}, ed)
	turn, _ := s.Prompt(textPrompt("read " + cwd + "/a.txt\nwrite " + cwd + "/a.txt x"))
	if got := turn.Result().Text; got != "ok \"unsaved buffer\"\nerr -32602\n" || ed.gotSession != s.ID {
		t.Fatalf("with editor: %q (session %q)", got, ed.gotSession)
	}
	release()
	turn, _ = s.Prompt(textPrompt("read " + cwd + "/a.txt"))
	if got := turn.Result().Text; got != "ok \"on disk\"\n" {
		t.Fatalf("after release: %q", got)
	}
}
