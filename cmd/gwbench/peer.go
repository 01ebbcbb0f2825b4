package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// peerProc is marimo's stdio-to-ws (npm, pinned in bench/package.json) in front of the flood agent: one agent
// process per WebSocket connection, raw ACP frames both ways.
type peerProc struct {
	url     string
	cmd     *exec.Cmd
	version string
}

// startPeer runs bench/node_modules/stdio-to-ws; an error says why the row is n/a.
func startPeer(benchDir string) (*peerProc, error) {
	main := filepath.Join(benchDir, "node_modules", "stdio-to-ws", "dist", "main.js")
	if _, err := os.Stat(main); err != nil {
		return nil, fmt.Errorf("stdio-to-ws not installed (run: cd bench && npm ci)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("node not found")
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if b, err := os.ReadFile(filepath.Join(benchDir, "node_modules", "stdio-to-ws", "package.json")); err == nil {
		_ = json.Unmarshal(b, &pkg)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	// --quiet silences its logs, but v0.2.0 still parses and pretty-prints every message to stdout: that is
	// part of its cost as shipped, so stdout goes to /dev/null rather than being patched out.
	cmd := exec.Command(node, main, "--quiet", "--port", port, strings.Join(floodCmd(), " "))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &peerProc{url: "ws://" + addr, cmd: cmd, version: pkg.Version}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return p, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.stop()
	return nil, errors.New("stdio-to-ws did not listen within 15s")
}

func (p *peerProc) stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
}

// acpWS is a raw-ACP WebSocket client: one JSON-RPC message per text frame.
type acpWS struct{ c wsConn }

func (a *acpWS) send(ctx context.Context, v any) error {
	b, _ := json.Marshal(v)
	return a.c.write(ctx, b)
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// call sends a request and reads until its response (ignoring anything else).
func (a *acpWS) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	if err := a.send(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		b, err := a.c.next(ctx)
		if err != nil {
			return nil, err
		}
		var m rpcMsg
		if json.Unmarshal(b, &m) == nil && m.Method == "" && string(m.ID) == strconv.Itoa(id) {
			if m.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, m.Error)
			}
			return m.Result, nil
		}
	}
}

// runPeer floods k stdio-to-ws connections at once (each has its own agent: the bridge cannot share one
// session between clients) and returns per-client figures.
func runPeer(ctx context.Context, p *peerProc, k int, prompt string, n, size int) (flood, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	type peerClient struct {
		ws   *acpWS
		sid  string
		rec  *recorder
		end  int64
		errs int
	}
	cls := make([]*peerClient, k)
	for i := range cls {
		c, err := dialWS(ctx, p.url)
		if err != nil {
			return flood{}, fmt.Errorf("dial stdio-to-ws: %w", err)
		}
		defer c.closeNow()
		a := &acpWS{c: c}
		if _, err := a.call(ctx, 1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
			return flood{}, err
		}
		res, err := a.call(ctx, 2, "session/new", map[string]any{"cwd": os.TempDir(), "mcpServers": []any{}})
		if err != nil {
			return flood{}, err
		}
		var s struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(res, &s)
		cls[i] = &peerClient{ws: a, sid: s.SessionID, rec: newRecorder(n)}
	}
	var wg sync.WaitGroup
	t0 := time.Now()
	for _, cl := range cls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := cl.ws
			if err := a.send(ctx, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
				"params": map[string]any{"sessionId": cl.sid, "prompt": []any{map[string]any{"type": "text", "text": prompt}}}}); err != nil {
				cl.errs++
				return
			}
			for {
				b, err := a.c.next(ctx)
				now := time.Now().UnixNano()
				if err != nil {
					cl.errs++
					return
				}
				if cl.rec.update(b, now) {
					continue
				}
				var m rpcMsg
				if json.Unmarshal(b, &m) != nil {
					continue
				}
				switch {
				case m.Method == "session/request_permission":
					_ = a.send(ctx, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}})
				case m.Method == "" && string(m.ID) == "3":
					cl.end = now
					if !bytes.Contains(m.Result, []byte(`"end_turn"`)) {
						cl.errs++
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	recs := make([]*recorder, k)
	fl := make([]flood, k)
	for i, cl := range cls {
		errs := cl.errs
		if cl.rec.chunks != n {
			errs++
		}
		recs[i] = cl.rec
		end := cl.end
		if end == 0 {
			end = time.Now().UnixNano()
		}
		fl[i] = cl.rec.result(t0, end, size, errs)
	}
	return merge(recs, fl), nil
}
