package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// runOnce runs the gateway with args on a free port and returns the error it stopped with, for start-up
// errors (run returns before it serves).
func runOnce(t *testing.T, args ...string) error {
	t.Helper()
	full := append([]string{"--addr", "127.0.0.1:0", "--demo-delay", "0", "--workdir", t.TempDir()}, args...)
	return run(context.Background(), full, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
}

// TestAgentsFileErrorsSayWhere: a missing agents file names the flag; a malformed one says the line and
// column of the fault.
func TestAgentsFileErrorsSayWhere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "agents.json")
	err := runOnce(t, "--agents", missing)
	if want := "--agents " + missing + ": no such file"; err == nil || err.Error() != want {
		t.Errorf("missing file: error %v, want %q", err, want)
	}

	bad := filepath.Join(t.TempDir(), "agents.json")
	doc := "{\n  \"agent_servers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n"
	if err := os.WriteFile(bad, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	err = runOnce(t, "--agents", bad)
	if want := "--agents " + bad + ": line 3, column 26: invalid character '}' looking for beginning of object key string"; err == nil || err.Error() != want {
		t.Errorf("malformed file: error %v, want %q", err, want)
	}

	truncated := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(truncated, []byte("{\"agent_servers\": {\n  \"a\": {\"command\": \"x\""), 0o600); err != nil {
		t.Fatal(err)
	}
	err = runOnce(t, "--agents", truncated)
	if want := "--agents " + truncated + ": line 2, column 23: unexpected end of JSON input"; err == nil || err.Error() != want {
		t.Errorf("truncated file: error %v, want %q", err, want)
	}

	wrongType := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(wrongType, []byte("{\"agent_servers\": {\n  \"a\": {\"command\": \"x\", \"args\": \"--acp\"}}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = runOnce(t, "--agents", wrongType)
	if want := `--agents ` + wrongType + `: line 2, column 39: "args" must be an array of strings, not a string`; err == nil || err.Error() != want {
		t.Errorf("wrong type: error %v, want %q", err, want)
	}
}

// TestUsersFileWithoutTokensWarns: a users file that lets nobody in (no user with a tokenSha256, no other
// sign-in) is a warning at start, not a silent 401 on every request; an empty file is an error that says so.
func TestUsersFileWithoutTokensWarns(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(users, []byte(`{"users": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--users", users)
	want := `level=WARN msg="the users file lists no user with a tokenSha256 and no other sign-in is configured: every request will be refused with 401; add a user with the hash of a token (gateway hash-token)" users=` + users
	if logs := g.logs.String(); !strings.Contains(logs, want) {
		t.Errorf("no warning %q in:\n%s", want, logs)
	}

	empty := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := runOnce(t, "--users", empty)
	if want := "users file " + empty + ` is empty: want {"users": [{"name", "role", "tokenSha256"}]}`; err == nil || err.Error() != want {
		t.Errorf("empty users file: error %v, want %q", err, want)
	}
}

// TestNATSURLSingleServerReplicas: --nats-url to a single (non-clustered) JetStream server with the default
// --nats-replicas 3 says what to do instead of NATS's raw "replicas > 1 not supported in non-clustered mode".
func TestNATSURLSingleServerReplicas(t *testing.T) {
	srv := natstest.Listen(t)
	err := runOnce(t, "--nats-url", srv.URL(), "--node-id", "single")
	want := "--nats-url " + srv.URL() + ": the NATS server is not part of a JetStream cluster, so it cannot keep --nats-replicas 3 copies: pass --nats-replicas 1 to use a single server (the sessions then live on its disk only), or point --nats-url at a JetStream cluster of at least 3 servers"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %q", err, want)
	}
}
