package sessions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/store"
	acp "github.com/coder/acp-go-sdk"
)

// holdingEditor announces each read on got and answers only when the request is withdrawn, with content of
// its own: an answer the agent must never get from a delegate that lost its right.
type holdingEditor struct{ got chan struct{} }

func (h *holdingEditor) ReadTextFile(ctx context.Context, _ json.RawMessage) (any, *acp.RequestError) {
	h.got <- struct{}{}
	<-ctx.Done()
	return map[string]string{"content": "injected"}, nil
}

func (h *holdingEditor) WriteTextFile(context.Context, json.RawMessage) (any, *acp.RequestError) {
	return nil, acp.NewInvalidParams(nil)
}

// TestDelegateHandsBackOnDowngrade: bob's editor, offered last, serves while he is a collaborator. Made a
// viewer while it holds a read, it loses the request at once and ann's editor (offered before) serves it;
// the next read goes to ann's editor too. Made a collaborator again, bob's offer counts again.
func TestDelegateHandsBackOnDowngrade(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("on disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(Config{Workdir: cwd}, []agents.Spec{fsSpec()}, "fs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	ann := principal.Principal{ID: "ann", Name: "ann", Role: principal.RoleUser}
	bob := principal.Principal{ID: "bob", Name: "bob", Role: principal.RoleUser}
	s, err := r.Create(context.Background(), CreateOptions{Owner: ann})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ShareAs(ann, "bob", store.ShareCollaborator); err != nil {
		t.Fatal(err)
	}
	defer s.DelegateFS(ann, &fakeEditor{})()
	held := &holdingEditor{got: make(chan struct{}, 1)}
	defer s.DelegateFS(bob, held)()

	turn, err := s.Prompt(textPrompt("read " + cwd + "/a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	<-held.got
	if err := s.ShareAs(ann, "bob", store.ShareViewer); err != nil {
		t.Fatal(err)
	}
	<-turn.Done()
	if got := turn.Result().Text; got != "ok \"unsaved buffer\"\n" {
		t.Fatalf("the read bob held when he became a viewer: %q, want ann's editor's", got)
	}
	turn, _ = s.Prompt(textPrompt("read " + cwd + "/a.txt"))
	<-turn.Done()
	if got := turn.Result().Text; got != "ok \"unsaved buffer\"\n" || len(held.got) != 0 {
		t.Fatalf("a viewer's editor was asked, or the agent got %q", got)
	}

	if err := s.ShareAs(ann, "bob", store.ShareCollaborator); err != nil {
		t.Fatal(err)
	}
	turn, _ = s.Prompt(textPrompt("read " + cwd + "/a.txt"))
	<-held.got
	if err := s.UnshareAs(ann, "bob"); err != nil {
		t.Fatal(err)
	}
	<-turn.Done()
	if got := turn.Result().Text; got != "ok \"unsaved buffer\"\n" {
		t.Fatalf("the read bob held when the share ended: %q", got)
	}
}
