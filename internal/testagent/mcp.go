package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// The mcp mode reports, on each prompt, the MCP servers session/new gave it (one JSON array in a message
// chunk): name, type, command or url, the names of env entries and headers with a hash of each value (the
// values are secrets; a test compares hashes), and for a stdio server the tools it lists: the agent starts
// it with its env, speaks MCP's initialize and tools/list to it, and stops it. -mcp-caps advertises
// mcpCapabilities (http, sse). -mcp-server makes this binary a stdio MCP server: its tools are "echo" and,
// per environment variable whose name starts with MCP_, "env_<NAME>_<hash of the value>", and per path in
// MCP_TRY_READ whether it could read it. A server named
// "refuse-me" makes session/new fail, quoting the whole configuration (secrets included) in the JSON-RPC
// error's data, on stderr and in a non-JSON line on stdout, as an agent that rejects its MCP configuration might.

type mcpReport struct {
	Name    string            `json:"name"`
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	URL     string            `json:"url,omitempty"`
	Env     map[string]string `json:"env,omitempty"`     // name → hash of the value
	Headers map[string]string `json:"headers,omitempty"` // name → hash of the value
	Tools   []string          `json:"tools,omitempty"`
	Error   string            `json:"error,omitempty"`
}

// secretHash is how the test agent and the MCP server show a secret: the first 12 hex digits of its SHA-256.
func secretHash(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:])[:12]
}

func hashes(l []acp.EnvVariable) map[string]string {
	if len(l) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, e := range l {
		m[e.Name] = secretHash(e.Value)
	}
	return m
}

func headerHashes(l []acp.HttpHeader) map[string]string {
	if len(l) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, e := range l {
		m[e.Name] = secretHash(e.Value)
	}
	return m
}

func (a *agent) mcpTurn(ctx context.Context, sid acp.SessionId) (acp.PromptResponse, error) {
	a.mu.Lock()
	servers := a.mcp[sid]
	a.mu.Unlock()
	reports := []mcpReport{}
	for _, s := range servers {
		switch {
		case s.Stdio != nil:
			r := mcpReport{Name: s.Stdio.Name, Type: "stdio", Command: s.Stdio.Command, Args: s.Stdio.Args, Env: hashes(s.Stdio.Env)}
			r.Tools, r.Error = listTools(ctx, s.Stdio)
			reports = append(reports, r)
		case s.Http != nil:
			reports = append(reports, mcpReport{Name: s.Http.Name, Type: "http", URL: s.Http.Url, Headers: headerHashes(s.Http.Headers)})
		case s.Sse != nil:
			reports = append(reports, mcpReport{Name: s.Sse.Name, Type: "sse", URL: s.Sse.Url, Headers: headerHashes(s.Sse.Headers)})
		}
	}
	out, _ := json.Marshal(reports)
	_ = a.update(ctx, sid, acp.UpdateAgentMessageText(string(out)))
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// listTools starts a stdio MCP server as an agent would and returns the names of its tools.
func listTools(ctx context.Context, s *acp.McpServerStdio) ([]string, string) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Command, s.Args...)
	cmd.Env = os.Environ()
	for _, e := range s.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, "start: " + err.Error()
	}
	defer func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	out := bufio.NewScanner(outPipe)
	call := func(id int, method string) (json.RawMessage, error) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "testagent", "version": "0"}}})
		if _, err := in.Write(append(b, '\n')); err != nil {
			return nil, err
		}
		if !out.Scan() {
			return nil, io.ErrUnexpectedEOF
		}
		var res struct {
			Result json.RawMessage `json:"result"`
		}
		return res.Result, json.Unmarshal(out.Bytes(), &res)
	}
	if _, err := call(1, "initialize"); err != nil {
		return nil, "initialize: " + err.Error()
	}
	_, _ = in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	res, err := call(2, "tools/list")
	if err != nil {
		return nil, "tools/list: " + err.Error()
	}
	var tl struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &tl); err != nil {
		return nil, "tools/list: " + err.Error()
	}
	names := make([]string, 0, len(tl.Tools))
	for _, t := range tl.Tools {
		names = append(names, t.Name)
	}
	return names, ""
}

// mcpServer is the -mcp-server mode: a minimal stdio MCP server (initialize, tools/list).
func mcpServer() {
	in := bufio.NewScanner(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // notifications
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]string{"name": "testagent-mcp", "version": "0"}}
		case "tools/list":
			tools := []map[string]any{{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}
			var env []string
			for _, kv := range os.Environ() {
				if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "MCP_") {
					env = append(env, "env_"+k+"_"+secretHash(v))
				}
			}
			sort.Strings(env)
			// MCP_TRY_READ lists paths (comma-separated) the server tries to read: one tool each,
			// "read_<i>_ok" or "read_<i>_denied".
			for i, p := range strings.Split(os.Getenv("MCP_TRY_READ"), ",") {
				if p == "" {
					continue
				}
				verdict := "ok"
				if _, err := os.ReadFile(p); err != nil && !errors.Is(err, syscall.EISDIR) {
					verdict = "denied"
				} else if errors.Is(err, syscall.EISDIR) {
					if _, err := os.ReadDir(p); err != nil {
						verdict = "denied"
					}
				}
				env = append(env, fmt.Sprintf("read_%d_%s", i, verdict))
			}
			for _, n := range env {
				tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			result = map[string]any{"tools": tools}
		default:
			_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": fmt.Sprintf("unknown method %s", req.Method)}})
			continue
		}
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}

// refuseMCP is the mcp mode's session/new failure when a server is named "refuse-me": nil otherwise.
func refuseMCP(out io.Writer, servers []acp.McpServer) error {
	for _, s := range servers {
		if s.Http != nil && s.Http.Name == "refuse-me" || s.Stdio != nil && s.Stdio.Name == "refuse-me" {
			cfg, _ := json.Marshal(servers)
			fmt.Fprintf(os.Stderr, "testagent: bad MCP configuration %s\n", cfg)
			fmt.Fprintf(out, "bad MCP configuration %s\n", cfg) // not JSON-RPC: a diagnostic line on stdout
			return acp.NewInvalidParams(map[string]any{"mcpServers": json.RawMessage(cfg)})
		}
	}
	return nil
}
