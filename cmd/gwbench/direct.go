package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// floodCmd is how this binary runs the flood agent: `gwbench floodagent`.
func floodCmd() []string { return []string{self, "floodagent"} }

// runDirect is the floor: an acp-go-sdk connection straight on the flood agent's stdio, no gateway. It uses the
// SDK's generic connection with a raw handler, the same way the gateway talks to agents, so the row measures
// the agent, the pipe and the SDK, and nothing the gateway adds.
func runDirect(ctx context.Context, prompt string, n, size int) (flood, error) {
	args := floodCmd()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return flood{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return flood{}, err
	}
	if err := cmd.Start(); err != nil {
		return flood{}, err
	}
	waited := false
	defer func() {
		if !waited {
			stdin.Close()
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}()
	rec := newRecorder(n)
	// The SDK starts reading in NewConnection; hold its reads until the logger is set (no data race).
	ready := make(chan struct{})
	gated := readerFunc(func(p []byte) (int, error) { <-ready; return stdout.Read(p) })
	allow := json.RawMessage(`{"outcome":{"outcome":"selected","optionId":"allow"}}`)
	conn := acp.NewConnection(func(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
		switch method {
		case acp.ClientMethodSessionUpdate:
			rec.update(params, time.Now().UnixNano())
			return nil, nil
		case acp.ClientMethodSessionRequestPermission:
			return allow, nil
		}
		return nil, acp.NewMethodNotFound(method)
	}, stdin, gated)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	close(ready)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := acp.SendRequest[json.RawMessage](conn, ctx, acp.AgentMethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		return flood{}, fmt.Errorf("initialize: %w", err)
	}
	res, err := acp.SendRequest[struct {
		SessionID string `json:"sessionId"`
	}](conn, ctx, acp.AgentMethodSessionNew, map[string]any{"cwd": os.TempDir(), "mcpServers": []any{}})
	if err != nil {
		return flood{}, fmt.Errorf("session/new: %w", err)
	}
	cpu0 := selfCPU()
	t0 := time.Now()
	pr, err := acp.SendRequest[struct {
		StopReason string `json:"stopReason"`
	}](conn, ctx, acp.AgentMethodSessionPrompt, map[string]any{"sessionId": res.SessionID, "prompt": []any{map[string]any{"type": "text", "text": prompt}}})
	end := time.Now().UnixNano()
	if err != nil {
		return flood{}, fmt.Errorf("session/prompt: %w", err)
	}
	errs := 0
	if pr.StopReason != "end_turn" || rec.chunks != n {
		errs++
	}
	f := rec.result(t0, end, size, errs)
	if rec.updates > 0 {
		f.ClientCPUus = float64((selfCPU() - cpu0).Microseconds()) / float64(rec.updates)
	}
	// The agent's own CPU per update (start-up included): the work every row shares.
	stdin.Close()
	select {
	case <-conn.Done():
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = cmd.Wait()
	waited = true
	if st := cmd.ProcessState; st != nil && rec.updates > 0 {
		f.CPUus = float64((st.UserTime() + st.SystemTime()).Microseconds()) / float64(rec.updates)
		f.AgentCPUus = f.CPUus
	}
	return f, nil
}

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
