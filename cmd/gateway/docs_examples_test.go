package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/acp-gateway/gateway/internal/agents"
)

// The examples of README.md and docs/*.md that are not whole sessions: every command line that starts the
// gateway parses with its flags, every agents file loads, the events agent's transcript is what it prints,
// and the README's Node one-liner streams a session.

// docFiles are the pages whose examples these tests read.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "..", "README.md")}, files...)
}

// fencedBlock is one ``` block of a page: its info string (language and any marker) and its text.
type fencedBlock struct {
	file, info, text string
	line             int
}

func fencedBlocks(t *testing.T, file string) []fencedBlock {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []fencedBlock
	var cur *fencedBlock
	for i, line := range strings.Split(string(raw), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &fencedBlock{file: filepath.Base(file), info: strings.TrimPrefix(line, "```"), line: i + 1}
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	return blocks
}

// gatewayLineRE finds a command that starts the gateway: go run ./cmd/gateway, acp-gateway or gateway.
var gatewayLineRE = regexp.MustCompile(`^(?:go run (?:-buildvcs=true )?\./cmd/gateway|acp-gateway|gateway)(?:\s+(.*))?$`)

// shellWords splits a command line as a shell would for these examples: single and double quotes, and a
// trailing comment.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				t.Fatalf("unbalanced quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '#' && !inWord:
			i = len(line)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestDocGatewayCommandLines: every command line in a ```sh block of README.md and docs/*.md that starts
// the gateway parses with the gateway's flags, in the environment its block exports (a placeholder token
// becomes a real one). The files it names are the examples' own: the README's agents.json, a certificate
// pair for /etc/acp-gateway/tls.
func TestDocGatewayCommandLines(t *testing.T) {
	dir := t.TempDir()
	agentsFile := filepath.Join(dir, "agents.json")
	if err := os.WriteFile(agentsFile, []byte(readmeAgentsFile(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, _ := testCert(t, dir)
	files := map[string]string{
		"agents.json":                        agentsFile,
		"/etc/acp-gateway/tls/fullchain.pem": certFile,
		"/etc/acp-gateway/tls/privkey.pem":   keyFile,
	}
	exportRE := regexp.MustCompile(`^export (GATEWAY_[A-Z_]+)=(\S+)`)
	checked := 0
	for _, file := range docFiles(t) {
		for _, b := range fencedBlocks(t, file) {
			if b.info != "sh" && !strings.HasPrefix(b.info, "sh ") {
				continue
			}
			env := map[string]string{}
			for _, line := range strings.Split(strings.ReplaceAll(b.text, "\\\n", " "), "\n") {
				line = strings.TrimSpace(line)
				if m := exportRE.FindStringSubmatch(line); m != nil {
					env[m[1]] = m[2]
					if m[1] == "GATEWAY_TOKEN" && (m[2] == "…" || strings.HasPrefix(m[2], "$(openssl")) {
						env[m[1]] = strings.Repeat("ab", 32) // what openssl rand -hex 32 gives, or the reader's own
					}
					continue
				}
				m := gatewayLineRE.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				args := shellWords(t, m[1])
				if len(args) > 0 && (args[0] == "hash-token" || args[0] == "healthcheck" || args[0] == "--version" || args[0] == "--help") {
					continue // not the server's flags: TestHashToken, TestHealthcheck, TestReleaseArtifact
				}
				for i, a := range args {
					if f, ok := files[a]; ok {
						args[i] = f
					}
				}
				if _, err := parseConfig(args, func(k string) string { return env[k] }, io.Discard); err != nil {
					t.Errorf("%s:%d: %q does not start: %v", b.file, b.line, line, err)
				}
				checked++
			}
		}
	}
	if checked < 8 {
		t.Fatalf("found %d gateway command lines in the docs; the pattern no longer matches them", checked)
	}
}

// readmeAgentsFile is the README's agents.json block.
func readmeAgentsFile(t *testing.T) string {
	t.Helper()
	for _, b := range fencedBlocks(t, filepath.Join("..", "..", "README.md")) {
		if b.info == "json" && strings.Contains(b.text, `"agent_servers"`) {
			return b.text
		}
	}
	t.Fatal("README.md has no agents.json block")
	return ""
}

// TestDocAgentsFiles: every agents file in the docs (a ```json or ```jsonc block with "agent_servers")
// loads, and each entry uses only keys the gateway reads (those --help explains).
func TestDocAgentsFiles(t *testing.T) {
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  "(\w+)"`).FindAllStringSubmatch(agentsFileHelp, -1) {
		known[m[1]] = true
	}
	if !known["command"] || !known["mcpServers"] {
		t.Fatalf("the keys of --help's agents-file text: %v", known)
	}
	commentRE := regexp.MustCompile(`(?m)^\s*//.*$`)
	checked := 0
	for _, file := range docFiles(t) {
		for _, b := range fencedBlocks(t, file) {
			if (b.info != "json" && b.info != "jsonc") || !strings.Contains(b.text, `"agent_servers"`) {
				continue
			}
			text := commentRE.ReplaceAllString(b.text, "")
			specs, err := agents.ParseAgentServers([]byte(text))
			if err != nil {
				t.Errorf("%s:%d: the agents file does not load: %v", b.file, b.line, err)
				continue
			}
			var doc struct {
				AgentServers map[string]map[string]json.RawMessage `json:"agent_servers"`
			}
			if err := json.Unmarshal([]byte(text), &doc); err != nil || len(specs) != len(doc.AgentServers) {
				t.Errorf("%s:%d: %d agents loaded of %d (%v)", b.file, b.line, len(specs), len(doc.AgentServers), err)
			}
			for name, entry := range doc.AgentServers {
				for key := range entry {
					if !known[key] {
						t.Errorf("%s:%d: agent %q has the key %q, which the gateway ignores", b.file, b.line, name, key)
					}
				}
			}
			checked++
		}
	}
	if checked < 4 {
		t.Fatalf("found %d agents files in the docs, want the README's, agents.md's two and events.md's", checked)
	}
}

// TestEventsDocTranscript: docs/events.md's first shell example, the events example agent answering one
// prompt, prints what the page shows.
func TestEventsDocTranscript(t *testing.T) {
	needTools(t, "bash")
	var block string
	for _, b := range fencedBlocks(t, filepath.Join("..", "..", "docs", "events.md")) {
		if b.info == "sh" && strings.Contains(b.text, "./examples/events-agent") {
			block = b.text
			break
		}
	}
	command, want, ok := strings.Cut(block, "\n")
	if !ok || !strings.HasSuffix(command, "| go run ./examples/events-agent") {
		t.Fatalf("docs/events.md: no transcript of go run ./examples/events-agent:\n%s", block)
	}
	// The package's test binary of the example (TestMain builds it) in place of go run.
	command = strings.Replace(command, "go run ./examples/events-agent", eventsAgent, 1)
	out, err := exec.Command("bash", "-euo", "pipefail", "-c", command).Output()
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	if string(out) != want {
		t.Fatalf("the events agent printed:\n%s\ndocs/events.md shows:\n%s", out, want)
	}
}

// TestReadmeNodeWebSocket runs the README's Node one-liner on a session: it prints the replayed frames of a
// turn and, when the session is closed, the close code.
func TestReadmeNodeWebSocket(t *testing.T) {
	t.Parallel()
	needTools(t, "node")
	var line string
	for _, b := range fencedBlocks(t, filepath.Join("..", "..", "README.md")) {
		for _, l := range strings.Split(b.text, "\n") {
			if strings.HasPrefix(l, "node -e ") {
				line = l
			}
		}
	}
	if line == "" {
		t.Fatal("README.md has no node -e example")
	}
	g := startGateway(t)
	s := g.createSession(nil)
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"quick"}`, nil); code != http.StatusOK {
		t.Fatalf("prompt: %d", code)
	}
	const readmeURL = `"ws://127.0.0.1:8080/v1/sessions/$ID/ws"`
	script := render(t, line, readmeURL, `"`+strings.Replace(g.base, "http", "ws", 1)+`/v1/sessions/`+s.ID+`/ws"`)
	if v, err := exec.Command("node", "--version").Output(); err == nil && strings.HasPrefix(string(v), "v20.") {
		script = strings.Replace(script, "node -e ", "node --experimental-websocket -e ", 1) // as the README says
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a safety net
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
		if strings.Contains(sc.Text(), `"_gateway/turn_ended"`) {
			break
		}
	}
	if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	all := strings.Join(got, "\n")
	if !strings.Contains(all, `"You said: "`) || !strings.Contains(all, `"_gateway/turn_ended"`) {
		t.Fatalf("the one-liner printed no turn:\n%s", all)
	}
	if last := got[len(got)-1]; !strings.HasPrefix(last, "closed 4009 ") {
		t.Fatalf("last line %q, want the session-closed code 4009\n%s", last, all)
	}
}

// jsonKeys collects every object key of a JSON value, at any depth.
func jsonKeys(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			into[k] = true
			jsonKeys(e, into)
		}
	case []any:
		for _, e := range x {
			jsonKeys(e, into)
		}
	}
}

// restDocBlock is the one ```json block of docs/rest.md that holds marker.
func restDocBlock(t *testing.T, marker string) string {
	t.Helper()
	var found []string
	for _, b := range fencedBlocks(t, filepath.Join("..", "..", "docs", "rest.md")) {
		if b.info == "json" && strings.Contains(b.text, marker) {
			found = append(found, b.text)
		}
	}
	if len(found) != 1 {
		t.Fatalf("docs/rest.md: %d ```json blocks hold %q, want 1", len(found), marker)
	}
	return found[0]
}

// TestRestDocExamples: the JSON examples of docs/rest.md (a Session, a TurnState awaiting permission, a
// pending permission, a problem) name only fields the gateway sends in those answers, and the problem is the
// one a second prompt gets, word for word. The examples elide values ("…"), so their keys are compared.
func TestRestDocExamples(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(nil)
	var turn, session map[string]any
	var perms map[string]any
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"refactor the parser"}`, &turn); code != http.StatusOK || turn["status"] != "awaiting_permission" {
		t.Fatalf("prompt: %d %v", code, turn)
	}
	g.do("GET", "/v1/sessions/"+s.ID+"/permissions", nil, &perms)
	g.do("GET", "/v1/sessions/"+s.ID, nil, &session)
	var problem map[string]any
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"again"}`, &problem); code != http.StatusConflict {
		t.Fatalf("a second prompt: %d %v", code, problem)
	}
	keyRE := regexp.MustCompile(`"([A-Za-z_]+)"\s*:`)
	for _, ex := range []struct {
		marker string
		answer any
	}{
		{`"permissionPolicy"`, session},
		{`"awaiting_permission"`, turn},
		{`"allow-always"`, perms},
		{`"/problems/turn_running"`, problem},
	} {
		have := map[string]bool{}
		jsonKeys(ex.answer, have)
		for _, m := range keyRE.FindAllStringSubmatch(restDocBlock(t, ex.marker), -1) {
			if !have[m[1]] {
				t.Errorf("docs/rest.md's example with %s names %q, which the answer lacks: %v", ex.marker, m[1], ex.answer)
			}
		}
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(restDocBlock(t, `"/problems/turn_running"`)), &doc); err != nil {
		t.Fatalf("the problem example is not JSON: %v", err)
	}
	// The detail names the running turn: the page's elided id stands for the real one.
	if id, ok := problem["turnId"].(string); ok && id != "" {
		if d, ok := problem["detail"].(string); ok {
			problem["detail"] = strings.ReplaceAll(d, id, fmt.Sprint(doc["turnId"]))
		}
	}
	for _, k := range []string{"type", "title", "status", "detail", "code"} {
		if doc[k] != problem[k] {
			t.Errorf("problem %s: docs/rest.md says %v, the gateway %v", k, doc[k], problem[k])
		}
	}
}

// TestWebSocketDocAnswers: the three permission answers docs/websocket.md shows, sent on the session socket
// with a real request's id, resolve it as the page says: the selected allow-once allows, cancelled and an
// error deny, each by the client.
func TestWebSocketDocAnswers(t *testing.T) {
	t.Parallel()
	var answers []string
	for _, b := range fencedBlocks(t, filepath.Join("..", "..", "docs", "websocket.md")) {
		if b.info == "json" && strings.Contains(b.text, `"outcome":"selected"`) {
			answers = strings.Split(strings.TrimSpace(b.text), "\n")
		}
	}
	if len(answers) != 3 {
		t.Fatalf("docs/websocket.md: the permission answers block holds %d lines, want 3", len(answers))
	}
	g := startGateway(t)
	for i, answer := range answers {
		s := g.createSession(nil)
		w := g.dial("/v1/sessions/" + s.ID + "/ws")
		g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"edit please"}`, nil)
		perm, _ := w.waitFor("permission", isPermissionRequest)
		w.send(json.RawMessage(render(t, answer, `"8354…"`, `"`+permIDOf(perm)+`"`)))
		res, _ := w.waitFor("permission_resolved", resolvedFor(permIDOf(perm)))
		if r := resolvedOf(t, res); r.By != "client" || r.Outcome.Allowed != (i == 0) {
			t.Errorf("%s resolved as %s, want by client, allowed %v", answer, res.Raw, i == 0)
		}
	}
}

// TestDocEnvBlocks: every ```sh block of settings alone (GATEWAY_* and OTEL_* lines, as in
// /etc/acp-gateway/env) is accepted: the gateway starts with its GATEWAY_* variables, and its OTEL_* ones
// turn traces on.
func TestDocEnvBlocks(t *testing.T) {
	lineRE := regexp.MustCompile(`^((?:GATEWAY|OTEL)_[A-Z_]+)=(\S*)$`)
	checked := 0
	for _, file := range docFiles(t) {
	blocks:
		for _, b := range fencedBlocks(t, file) {
			if b.info != "sh" {
				continue
			}
			env := map[string]string{}
			for _, line := range strings.Split(b.text, "\n") {
				if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				m := lineRE.FindStringSubmatch(line)
				if m == nil {
					continue blocks
				}
				env[m[1]] = m[2]
			}
			if len(env) == 0 {
				continue
			}
			getenv := func(k string) string { return env[k] }
			if _, err := parseConfig(nil, getenv, io.Discard); err != nil {
				t.Errorf("%s:%d: the settings do not start the gateway: %v", b.file, b.line, err)
			}
			for k := range env {
				if !strings.HasPrefix(k, "OTEL_") {
					continue
				}
				logger := slog.New(slog.NewTextHandler(io.Discard, nil))
				tracer, stop, err := startTraces(context.Background(), getenv, logger, time.Second)
				if err != nil || tracer == nil {
					t.Errorf("%s:%d: the settings do not turn traces on: %v", b.file, b.line, err)
				} else {
					stop()
				}
				break
			}
			checked++
		}
	}
	if checked < 2 {
		t.Fatalf("found %d blocks of settings in the docs, want deploy.md's proxy and traces blocks", checked)
	}
}

// TestAgentsDocProbeExample: docs/agents.md's example entry of GET /v1/agents has the fields of a real
// entry and of its info (the built-in agent's); what is inside capabilities is the agent's own answer.
func TestAgentsDocProbeExample(t *testing.T) {
	t.Parallel()
	var example string
	for _, b := range fencedBlocks(t, filepath.Join("..", "..", "docs", "agents.md")) {
		if b.info == "json" && strings.Contains(b.text, `"probedAt"`) {
			example = b.text
		}
	}
	// The example elides ("…" in place of more members and items); without them it is JSON.
	var doc map[string]any
	if err := json.Unmarshal([]byte(strings.NewReplacer(", …", "", "[…]", "[]").Replace(example)), &doc); err != nil {
		t.Fatalf("docs/agents.md's probed agent, without its elisions, is not JSON: %v\n%s", err, example)
	}
	g := startGateway(t)
	var list struct{ Agents []map[string]any }
	if code := g.do("GET", "/v1/agents", nil, &list); code != http.StatusOK || len(list.Agents) != 1 {
		t.Fatalf("GET /v1/agents: %d %v", code, list.Agents)
	}
	demo := list.Agents[0]
	for k := range doc {
		if _, ok := demo[k]; !ok {
			t.Errorf("docs/agents.md's probed agent has %q, an entry of GET /v1/agents does not: %v", k, demo)
		}
	}
	info, _ := demo["info"].(map[string]any)
	for k := range doc["info"].(map[string]any) {
		if _, ok := info[k]; !ok {
			t.Errorf("docs/agents.md's info has %q, the demo agent's does not: %v", k, info)
		}
	}
}

// TestClusterDocNATSConf: docs/cluster.md's nats.conf is one nats-server reads: JetStream on, the cluster
// named, the three routes.
func TestClusterDocNATSConf(t *testing.T) {
	var conf string
	for _, b := range fencedBlocks(t, filepath.Join("..", "..", "docs", "cluster.md")) {
		if b.info == "" && strings.HasPrefix(b.text, "server_name: n1\n") {
			conf = b.text
		}
	}
	if conf == "" {
		t.Fatal("docs/cluster.md has no nats.conf of n1")
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := natsserver.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server refuses docs/cluster.md's nats.conf: %v", err)
	}
	if !opts.JetStream || opts.StoreDir != "/var/lib/nats" || opts.Cluster.Name != "acpgw" || len(opts.Routes) != 3 || opts.ServerName != "n1" {
		t.Fatalf("nats.conf read as jetstream %v store %q cluster %q routes %v name %q",
			opts.JetStream, opts.StoreDir, opts.Cluster.Name, opts.Routes, opts.ServerName)
	}
}
