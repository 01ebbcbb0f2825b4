package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
)

// runChildOnce runs the test binary bin as a gateway process with args (on a free port unless args say
// otherwise) until it exits, as the user cred when not nil, and returns its stderr and exit code.
func runChildOnce(t *testing.T, bin string, cred *syscall.Credential, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\n"))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}

// TestBadFlagValueIsOneLine: a value a flag cannot take is one line naming the flag, the value and what it
// wants, then a hint at --help, and exit code 2; the usage is printed only for --help.
func TestBadFlagValueIsOneLine(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--demo-delay", "abc"}, `--demo-delay "abc": want a duration like 300ms, 15s or 2m`},
		{[]string{"--max-sessions", "lots"}, `--max-sessions "lots": want a whole number like 64`},
		{[]string{"--max-body-bytes", "4MB"}, `--max-body-bytes "4MB": want a number of bytes like 1048576 (1 MiB)`},
		{[]string{"--redact=maybe"}, `--redact "maybe": want true or false`},
		{[]string{"--rate-limit", "fast"}, `--rate-limit "fast": want a number like 50 or 0.5`},
		{[]string{"--agent", "claude"}, `--agent "claude": want name=command [args...]`},
		{[]string{"--no-such-flag"}, `unknown flag --no-such-flag`},
		{[]string{"--token-file"}, `--token-file needs a value`},
		{[]string{"--addr", "127.0.0.1:99999"}, `--addr "127.0.0.1:99999": the port must be a number from 0 to 65535`},
		{[]string{"--addr", "8080"}, `--addr "8080": want host:port like 127.0.0.1:8080 (port 0 picks a free one)`},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		args := append([]string{"--workdir", t.TempDir()}, c.args...)
		err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v\nwant %q", c.args, err, c.want)
		}
		if stdout.Len()+stderr.Len() > 0 {
			t.Errorf("%v: printed besides the error:\n%s%s", c.args, stdout.String(), stderr.String())
		}
	}

	out, code := runChildOnce(t, os.Args[0], nil, t.TempDir(), "--demo-delay", "abc")
	if want := "gateway: --demo-delay \"abc\": want a duration like 300ms, 15s or 2m\nrun 'gateway --help' for usage\n"; out != want || code != 2 {
		t.Errorf("process: exit %d, stderr %q\nwant exit 2, stderr %q", code, out, want)
	}
}

// TestListenErrorNamesAddr: a port another process holds is refused naming --addr, the address and why.
func TestListenErrorNamesAddr(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	err = run(context.Background(), []string{"--addr", addr, "--workdir", t.TempDir()}, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
	want := "--addr " + addr + ": cannot listen: bind: address already in use: another process listens there; stop it or choose another port"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %q", err, want)
	}
}

// TestHelpListsEveryAgentsFileKey: the usage describes every key an agents-file entry accepts (taken from
// the parser's own struct), and no key the parser does not accept.
func TestHelpListsEveryAgentsFileKey(t *testing.T) {
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, func(string) string { return "" }, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatal(err)
	}
	help := stderr.String()
	_, keysPart, _ := strings.Cut(help, "Agents file (--agents)")
	described := map[string]bool{}
	for _, line := range strings.Split(keysPart, "\n") {
		if rest, ok := strings.CutPrefix(line, `  "`); ok {
			key, _, _ := strings.Cut(rest, `"`)
			described[key] = true
		}
	}
	for _, key := range agents.FileKeys() {
		if !described[key] {
			t.Errorf("--help does not describe the agents-file key %q", key)
		}
		delete(described, key)
	}
	for key := range described {
		t.Errorf("--help describes %q, which the agents-file parser does not accept", key)
	}
}
