package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/confine"
)

// TestAgentTerminalConfined: from inside an agent's terminal, with --data-dir and two
// sessions in one workspace root, the command reads and writes its own cwd, but neither lists the data dir,
// nor reads the other session's files or the agents file, nor finds the gateway's environment in /proc.
func TestAgentTerminalConfined(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	root := t.TempDir()
	ann, bob := filepath.Join(root, "ann"), filepath.Join(root, "bob")
	for _, d := range []string{ann, bob} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bob, "secret.txt"), []byte("bob's words"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ann, "own.txt"), []byte("ann's words"), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	// The agents file holds other agents' API keys.
	agentsFile := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(agentsFile, []byte(`{"agent_servers": {"other": {"command": "other-agent", "env": {"API_KEY": "sk-other"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g, _ := testAgentGateway(t, "term", "--data-dir", dataDir, "--workspace-root", root, "--workdir", ann, "--agents", agentsFile)
	if !strings.Contains(g.logs.String(), "confinement: landlock") {
		t.Errorf("no start-up line saying which confinement is active:\n%s", g.logs.String())
	}
	g.createSession(map[string]any{"cwd": bob})
	s := g.createSession(map[string]any{"cwd": ann})
	environ := "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"
	reads := []string{filepath.Join(ann, "own.txt"), dataDir, filepath.Join(bob, "secret.txt"), bob, environ, agentsFile}
	r := runTerminalSteps(t, g, s.ID,
		printCmd(t, "-read", strings.Join(reads, ","), "-write", filepath.Join(ann, "new.txt")),
		map[string]any{"op": "wait"}, map[string]any{"op": "output"})
	out := r[2].Result.Output
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(reads)+1 {
		t.Fatalf("terminal output %q", out)
	}
	want := []string{"ok", "denied", "denied", "denied", "", "denied", "ok"}
	for i, line := range lines {
		if want[i] != "" && !strings.HasPrefix(line, want[i]+" ") {
			t.Errorf("line %d: %q, want %s", i, line, want[i])
		}
	}
	if strings.Contains(lines[4], "PATH=") || strings.Contains(lines[4], "HOME=") {
		t.Errorf("the gateway's environment is readable: %q", lines[4])
	}
	// A command run in a directory inside the cwd has the whole cwd, as the agent does.
	sub := filepath.Join(ann, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	inSub := printCmd(t, "-write", filepath.Join(ann, "from-sub.txt"))
	inSub["cwd"] = sub
	r = runTerminalSteps(t, g, s.ID, inSub, map[string]any{"op": "wait"}, map[string]any{"op": "output"})
	if o := r[2].Result.Output; !strings.HasPrefix(o, "ok ") {
		t.Errorf("a command in %s writing to the session cwd: %q", sub, o)
	}
	// The request's env is the agent's choice: a HOME or PATH in it widens nothing.
	widen := printCmd(t, "-read", filepath.Join(bob, "secret.txt")+","+dataDir)
	widen["env"] = []map[string]string{{"name": "HOME", "value": bob}, {"name": "PATH", "value": dataDir}}
	r = runTerminalSteps(t, g, s.ID, widen, map[string]any{"op": "wait"}, map[string]any{"op": "output"})
	for _, line := range strings.Split(strings.TrimSpace(r[2].Result.Output), "\n") {
		if !strings.HasPrefix(line, "denied ") {
			t.Errorf("with HOME and PATH set by the request: %q", line)
		}
	}
	if strings.Contains(out, "bob's words") {
		t.Errorf("the other session's file was read: %q", out)
	}
}

// TestConfineFlag: --confine takes auto, landlock or off, and the start-up log says what is active.
func TestConfineFlag(t *testing.T) {
	if _, err := parseConfig([]string{"--confine", "sometimes"}, func(string) string { return "" }, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--confine") {
		t.Fatalf("--confine sometimes: %v", err)
	}
	g := startGateway(t, "--confine", "off")
	if !strings.Contains(g.logs.String(), "confinement: off") {
		t.Fatalf("no start-up line for --confine off:\n%s", g.logs.String())
	}
}

// TestClientMCPStdioServerConfined: a client's stdio MCP server, which the agent starts,
// reads the session cwd but not the gateway's data dir.
func TestClientMCPStdioServerConfined(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	wd, dataDir := t.TempDir(), filepath.Join(t.TempDir(), "data")
	own := filepath.Join(wd, "own.txt")
	if err := os.WriteFile(own, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := mcpGateway(t, "", "--allow-client-mcp-stdio", "--data-dir", dataDir, "--workdir", wd)
	r := &mcpRecorder{t: t, g: g}
	stdio := map[string]any{"name": "client-stdio", "command": testAgentBinary(t), "args": []string{"-mcp-server"},
		"env": []any{map[string]string{"name": "MCP_TRY_READ", "value": own + "," + dataDir}}}
	code, data := r.do("POST", "/v1/sessions", map[string]any{"mcpServers": []any{stdio}})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, data)
	}
	var s sessionJSON
	_ = json.Unmarshal(data, &s)
	tools := strings.Join(r.reports(s.ID)["client-stdio"].Tools, ",")
	if !strings.Contains(tools, "read_0_ok") || !strings.Contains(tools, "read_1_denied") {
		t.Fatalf("client stdio server tools %s: want its cwd readable (read_0_ok), the data dir not (read_1_denied)", tools)
	}
}

// TestAdditionalDirectoriesGrantedToConfinedAgents: a session's additionalDirectories are granted to its
// confined agent's terminals as its cwd is (read and write), and nothing else of the workspace root is.
func TestAdditionalDirectoriesGrantedToConfinedAgents(t *testing.T) {
	if confine.ABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	root := t.TempDir()
	ann, shared, bob := filepath.Join(root, "ann"), filepath.Join(root, "shared"), filepath.Join(root, "bob")
	for _, d := range []string{ann, shared, bob} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(shared, "notes.txt"), filepath.Join(bob, "secret.txt")} {
		if err := os.WriteFile(f, []byte("words"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "testagent-term")
	if err := os.Symlink(testAgentBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--workspace-root", root, "--workdir", ann, "--agent", "ta="+bin+" -mode term -additional-dirs", "--default-agent", "ta")
	s := g.createSession(map[string]any{"cwd": ann, "additionalDirectories": []string{shared}})
	reads := []string{filepath.Join(shared, "notes.txt"), filepath.Join(bob, "secret.txt")}
	r := runTerminalSteps(t, g, s.ID,
		printCmd(t, "-read", strings.Join(reads, ","), "-write", filepath.Join(shared, "new.txt")),
		map[string]any{"op": "wait"}, map[string]any{"op": "output"})
	lines := strings.Split(strings.TrimSpace(r[2].Result.Output), "\n")
	want := []string{"ok", "denied", "ok"}
	if len(lines) != len(want) {
		t.Fatalf("terminal output %q", r[2].Result.Output)
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, want[i]+" ") {
			t.Errorf("line %d: %q, want %s", i, line, want[i])
		}
	}
}
