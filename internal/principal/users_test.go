package principal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/principal"
)

func writeUsers(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestUsersFileResolvesTokensAndRevokesOnReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	writeUsers(t, path, `{"users": [
		{"name": "ann", "role": "user", "tokenSha256": "`+principal.HashToken("ann-secret")+`"},
		{"name": "bob", "role": "admin", "tokenSha256": "`+principal.HashToken("bob-secret")+`"},
		{"name": "sso-only", "role": "user"}]}`)
	u, err := principal.OpenUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	ann, annLive, ok := u.ByToken("ann-secret")
	if !ok || ann != (principal.Principal{ID: "ann", Name: "ann", Role: principal.RoleUser}) {
		t.Fatalf("ann: %+v %v", ann, ok)
	}
	_, bobLive, ok := u.ByToken("bob-secret")
	if !ok {
		t.Fatal("bob not found")
	}
	for _, bad := range []string{"", "ann-secret ", "nope"} {
		if p, _, ok := u.ByToken(bad); ok {
			t.Fatalf("token %q resolved to %+v", bad, p)
		}
	}
	if _, _, ok := u.ByName("sso-only"); !ok {
		t.Fatal("a user without a token is still a name a proxy may present")
	}
	// ann removed, bob unchanged.
	writeUsers(t, path, `{"users": [{"name": "bob", "role": "admin", "tokenSha256": "`+principal.HashToken("bob-secret")+`"}]}`)
	revoked, err := u.Reload()
	if err != nil || len(revoked) != 2 || revoked[0] != "ann" || revoked[1] != "sso-only" {
		t.Fatalf("reload: revoked %v, err %v", revoked, err)
	}
	if annLive.Err() == nil {
		t.Fatal("ann's requests were not revoked")
	}
	if bobLive.Err() != nil {
		t.Fatal("bob, unchanged, was revoked")
	}
	if _, _, ok := u.ByToken("ann-secret"); ok {
		t.Fatal("ann's token still works")
	}
	// A broken file changes nothing.
	writeUsers(t, path, `{"users": [`)
	if _, err := u.Reload(); err == nil {
		t.Fatal("a broken file reloaded")
	}
	if _, _, ok := u.ByToken("bob-secret"); !ok || bobLive.Err() != nil {
		t.Fatal("a failed reload dropped bob")
	}
}

func TestUsersFileRefusesBadEntries(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a token itself":  `{"users": [{"name": "ann", "role": "user", "token": "secret"}]}`,
		"bad role":        `{"users": [{"name": "ann", "role": "root"}]}`,
		"short digest":    `{"users": [{"name": "ann", "role": "user", "tokenSha256": "abcd"}]}`,
		"duplicate name":  `{"users": [{"name": "ann", "role": "user"}, {"name": "ann", "role": "admin"}]}`,
		"name with slash": `{"users": [{"name": "a/b", "role": "user"}]}`,
		"an OIDC id":      `{"users": [{"name": "oidc:alice", "role": "user"}]}`,
		"name with colon": `{"users": [{"name": "corp:ann", "role": "user"}]}`,
		"the token's id":  `{"users": [{"name": "admin", "role": "user"}]}`,
		"anonymous":       `{"users": [{"name": "anonymous", "role": "admin"}]}`,
		"shared token":    `{"users": [{"name": "ann", "role": "user", "tokenSha256": "` + principal.HashToken("t") + `"}, {"name": "bob", "role": "admin", "tokenSha256": "` + principal.HashToken("t") + `"}]}`,
		"not json":        `users: ann`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		writeUsers(t, path, body)
		if _, err := principal.OpenUsers(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
