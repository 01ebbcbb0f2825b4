package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestHelpExitsZero: --help (and -h) is a request, not an error: run returns nil, and the usage says how to
// use the environment and what each agents-file key means.
func TestHelpExitsZero(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), []string{arg}, func(string) string { return "" }, &out, &errOut); err != nil {
			t.Fatalf("run %s: %v", arg, err)
		}
		usage := out.String() + errOut.String()
		for _, want := range []string{"GATEWAY_", "GATEWAY_TOKEN", "GATEWAY_DEMO_DELAY", `"command"`, `"args"`, `"env"`, `"kind"`, `"home"`, `"authenticate"`, "--addr"} {
			if !strings.Contains(usage, want) {
				t.Errorf("%s: usage lacks %q:\n%s", arg, want, usage)
			}
		}
	}
}

// TestFlagErrorsSayWhatIsWanted: a value that does not parse, from the environment or the command line, is
// refused with the shape of the value wanted, not Go's "parse error".
func TestFlagErrorsSayWhatIsWanted(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env: map[string]string{"GATEWAY_DEMO_DELAY": "abc"}, want: `GATEWAY_DEMO_DELAY="abc": want a duration like 300ms`},
		{args: []string{"--demo-delay", "abc"}, want: "want a duration like 300ms"},
		{env: map[string]string{"GATEWAY_MAX_SESSIONS": "lots"}, want: `GATEWAY_MAX_SESSIONS="lots": want a whole number like 64`},
		{args: []string{"--max-body-bytes", "4MB"}, want: "want a number of bytes like 1048576"},
		{env: map[string]string{"GATEWAY_REDACT": "maybe"}, want: `GATEWAY_REDACT="maybe": want true or false`},
		{args: []string{"--rate-limit", "fast"}, want: "want a number like 50 or 0.5"},
	}
	for _, c := range cases {
		_, err := parseConfig(append([]string{"--workdir", t.TempDir()}, c.args...), func(k string) string { return c.env[k] }, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "parse error") {
			t.Errorf("env %v args %v: error %v, want it to say %q", c.env, c.args, err, c.want)
		}
	}
}

// TestListenOnWildcardLogsUsableURLs: 0.0.0.0 is no address a browser can open; the log offers loopback and
// the machine's host name.
func TestListenOnWildcardLogsUsableURLs(t *testing.T) {
	g := startGateway(t, "--addr", "0.0.0.0:0", "--token", "first-run-token-0123456789")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(g.base, "http://"))
	logs := g.logs.String()
	if !strings.Contains(logs, "http://127.0.0.1:"+port+"/") {
		t.Errorf("the log offers no loopback URL:\n%s", logs)
	}
	if host, err := os.Hostname(); err == nil && !strings.Contains(logs, "http://"+net.JoinHostPort(host, port)+"/") {
		t.Errorf("the log offers no URL with the host name %q:\n%s", host, logs)
	}
	if strings.Contains(logs, `url=http://0.0.0.0:`) {
		t.Errorf("the log offers the wildcard address as a URL:\n%s", logs)
	}
	// Without a token only loopback names are served: the host name would answer 403, so it is not offered.
	open := startGateway(t, "--addr", "0.0.0.0:0", "--insecure-no-auth")
	_, port, _ = net.SplitHostPort(strings.TrimPrefix(open.base, "http://"))
	logs = open.logs.String()
	if !strings.Contains(logs, "http://127.0.0.1:"+port+"/") {
		t.Errorf("no token: the log offers no loopback URL:\n%s", logs)
	}
	if host, err := os.Hostname(); err == nil && strings.Contains(logs, "http://"+net.JoinHostPort(host, port)+"/") {
		t.Errorf("no token: the log offers the host name %q, which the host policy refuses:\n%s", host, logs)
	}
}

// TestMissingAgentCommand: an agent whose command is not found is a warning at start, is listed
// `available: false` with a reason, and creating a session with it is a clear 503, not a 502 on first use.
func TestMissingAgentCommand(t *testing.T) {
	g := startGateway(t, "--agent", "ghost=definitely-not-an-installed-agent-xyz --acp")
	if logs := g.logs.String(); !strings.Contains(logs, "agent unavailable") || !strings.Contains(logs, "agent=ghost") {
		t.Errorf("no start warning naming the agent:\n%s", logs)
	}
	var list struct {
		Agents []struct {
			Name      string `json:"name"`
			Available *bool  `json:"available"`
			Reason    string `json:"reason"`
		} `json:"agents"`
	}
	if code := g.do("GET", "/v1/agents", nil, &list); code != http.StatusOK {
		t.Fatalf("agents: %d", code)
	}
	for _, a := range list.Agents {
		switch {
		case a.Available == nil:
			t.Errorf("agent %s: no available field", a.Name)
		case a.Name == "ghost" && (*a.Available || a.Reason == ""):
			t.Errorf("ghost listed available=%v reason=%q", *a.Available, a.Reason)
		case a.Name == "demo" && !*a.Available:
			t.Errorf("demo listed unavailable: %q", a.Reason)
		}
	}
	var p problemJSON
	code := g.do("POST", "/v1/sessions", map[string]any{"agent": "ghost"}, &p)
	if code != http.StatusServiceUnavailable || p.Code != "agent_unavailable" || !strings.Contains(p.Detail, "ghost") {
		t.Errorf("create with ghost: %d %+v", code, p)
	}
	if strings.Contains(p.Detail, "definitely-not-an-installed-agent-xyz") {
		t.Errorf("detail %q shows the agent's command line", p.Detail)
	}
}
