package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// envName is the environment variable that sets a flag: GATEWAY_<NAME>, dashes as underscores.
func envName(flagName string) string {
	return "GATEWAY_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// agentsFileHelp says what each key of an agents file entry means; it ends the usage text.
const agentsFileHelp = `Agents file (--agents), the shape of Zed's agent_servers setting:
  {"agent_servers": {"<name>": {"command": "codex-acp", "args": [], "env": {"KEY": "value"}, ...}}}
  "command"       the program to run (looked up on PATH); required
  "args"          its arguments, a JSON array of strings
  "env"           variables added to the environment it gets (only PATH, HOME, USER, LANG and a few more
                  are passed on from the gateway's own)
  "kind"          "acp" (default): it speaks ACP over stdio; "events": it speaks the native event dialect
                  (docs/events.md) and the gateway adapts it
  "home"          "isolated": it gets a HOME of its own under --home-root, its state and logins kept apart;
                  "per-principal": each principal gets its own HOME there (<root>/<name>/<principal>), so
                  one user's login (a terminal login from the UI) is never used for another's sessions
  "authenticate"  an ACP auth method id sent as "authenticate" before session/new (e.g. "openai-api-key")
  "mcpServers"    MCP servers passed to it on every session/new, in ACP's shape: [{"name", "command", "args",
                  "env": [{"name", "value"}]}] or [{"type": "http"|"sse", "name", "url", "headers": [...]}]
                  (docs/agents.md); their env and headers are never shown to clients
  "confine"       {"read": [...], "write": [...]}: absolute paths its processes may also read (and execute)
                  or write when confined (--confine); they always have their cwd, HOME and TMPDIR
  "login"         {"shared": true}: what one user supplies to log the agent in (its env_var and agent auth
                  methods, /v1/agents/{agent}/login) serves every user's sessions; only admins change it.
                  Absent: each user's login serves only their own sessions (docs/agents.md)
`

// usage prints how to run the gateway: every flag with its environment variable, then the agents file.
func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, `Usage: gateway [flags]
       gateway hash-token < token-file    (prints the tokenSha256 of a --users entry)
       gateway healthcheck [--addr A] [--tls]   (exit 0 when this environment's gateway answers /healthz ok)

Serves ACP agents to web clients over REST, WebSocket and SSE. Every flag can also be set by an environment
variable GATEWAY_<NAME> (dashes as underscores: --demo-delay is GATEWAY_DEMO_DELAY, the token GATEWAY_TOKEN);
a flag on the command line wins over the environment.

Traces (OpenTelemetry, OTLP over HTTP or gRPC) are off unless OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
or OTEL_TRACES_EXPORTER=otlp is set; the standard OTEL_* variables configure them (docs/deploy.md#traces).

Flags:
`)
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		if f.Name == "version" {
			env = "no variable"
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "[]" {
			def = " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "  --%s  [%s]%s\n    \t%s\n", f.Name, env, def, f.Usage)
	})
	fmt.Fprintf(w, "\n%s", agentsFileHelp)
}
