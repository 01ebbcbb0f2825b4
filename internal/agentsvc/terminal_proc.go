package agentsvc

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/confine"
	"golang.org/x/sys/unix"
)

// terminalReadBytes is one read of a command's output, and the bound of the text of one
// `_gateway/terminal_output` frame.
const terminalReadBytes = 8 << 10

// terminal is one command the gateway runs for an agent (ACP terminal/create): its own process group, its
// stdout and stderr merged into one pipe, read by one reader goroutine; one waiter goroutine waits for the
// process, kills what it left in its group (agents.ProcessTree, as for agents), lets the reader finish and
// records the exit. Both end by themselves once the process is gone; kill makes it go.
type terminal struct {
	// Static after construction.
	id       string
	exit     func(id string, code *int, sig *string) // logs the exit, after the last output
	cmd      *exec.Cmd
	tree     *agents.ProcessTree
	out      *os.File          // the pipe's read end; Owned by the reader, closed by the waiter after the reader ended
	grace    time.Duration     // between SIGTERM and SIGKILL, and how long output may trail the exit
	read     chan struct{}     // closed when the reader has ended
	exited   chan struct{}     // closed when the exit is recorded (and logged, after the last output)
	log      *terminalLog      // what clients are sent of the output; the reader adds to it and closes it
	confined *confine.Confined // what confinement made for the command (its TMPDIR), released once it has exited

	mu       sync.Mutex
	output   terminalOutput // Guarded by mu.
	exitCode *int           // Guarded by mu; set before exited is closed.
	signal   *string        // Guarded by mu; set before exited is closed.
}

// start starts the command and its reader and waiter.
func (ts *Terminals) start(id string, req createTerminal, dir string, limit int) (*terminal, error) {
	cfg := ts.cfg
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	tree := agents.NewProcessTree(cfg.StopGrace)
	cmd := exec.Command(req.Command, req.Args...)
	cmd.Dir = dir
	env := append([]string(nil), cfg.Env...)
	for _, e := range req.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	// Last, so the request cannot replace the marker that finds what the command leaves behind.
	cmd.Env = append(env, tree.Env())
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Confined as the session's agent is: the whole session cwd (the command may run in a directory inside
	// it) and the session's additionalDirectories, the agent's HOME and PATH (never the request's env: the
	// agent chose it), what the agent's entry in the agents file adds.
	extra := cfg.Confine
	extra.Write = append(append([]string{cfg.Workspace.Cwd}, cfg.MoreDirs...), extra.Write...)
	agentEnv := append([]string(nil), cfg.Env...)
	for k, v := range cfg.AgentEnv {
		agentEnv = append(agentEnv, k+"="+v)
	}
	confined, err := cfg.Confiner.Wrap(cmd, extra, agentEnv)
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	err = agents.StartProcess(cmd, confined)
	w.Close() // the command has its own copy; EOF comes when it (and what it started) closes theirs
	if err != nil {
		confined.Release()
		r.Close()
		return nil, err
	}
	tree.Started(cmd.Process.Pid)
	t := &terminal{
		id: id, exit: cfg.Exit, cmd: cmd, tree: tree, out: r, grace: cfg.StopGrace, confined: confined,
		read: make(chan struct{}), exited: make(chan struct{}),
		output: terminalOutput{limit: limit},
	}
	t.log = newTerminalLog(func(data string, truncated bool) { cfg.Output(id, data, truncated) },
		terminalLogBudget, terminalTailBytes, terminalReadBytes, terminalFrameInterval)
	go t.readOutput()
	go t.wait()
	return t, nil
}

// readOutput keeps and logs the command's output until EOF (or the waiter's deadline).
func (t *terminal) readOutput() {
	defer close(t.read)
	buf := make([]byte, terminalReadBytes)
	for {
		n, err := t.out.Read(buf)
		if n > 0 {
			t.mu.Lock()
			text := t.output.add(buf[:n])
			t.mu.Unlock()
			t.log.add(text)
		}
		if err != nil {
			break
		}
	}
	t.mu.Lock()
	text := t.output.flush()
	t.mu.Unlock()
	t.log.add(text)
	t.log.close()
}

// wait records the exit once the process is gone and its output read.
func (t *terminal) wait() {
	err := agents.WaitProcess(t.cmd)
	t.tree.Reap() // what the command left in its group, or marked, goes with it
	t.confined.Release()
	// Output still in the pipe is read; a process that escaped the group and keeps the pipe open is not
	// waited for past the grace.
	_ = t.out.SetReadDeadline(time.Now().Add(t.grace))
	<-t.read
	t.out.Close()
	code, sig := exitStatus(t.cmd.ProcessState, err)
	t.mu.Lock()
	t.exitCode, t.signal = code, sig
	t.mu.Unlock()
	t.exit(t.id, code, sig)
	close(t.exited)
}

// exitStatus is ACP's {exitCode, signal}: one of them set.
func exitStatus(ps *os.ProcessState, err error) (*int, *string) {
	if ps == nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return &code, nil
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = ws.Signal().String()
		}
		return nil, &name
	}
	code := ps.ExitCode()
	return &code, nil
}

// kill ends the command: SIGTERM to its group, SIGKILL after the grace; it returns once the exit is recorded.
func (t *terminal) kill() {
	select {
	case <-t.exited:
		return
	default:
	}
	t.tree.Record()
	t.tree.Kill(syscall.SIGTERM)
	timer := time.NewTimer(t.grace)
	defer timer.Stop()
	select {
	case <-t.exited:
		return
	case <-timer.C:
	}
	t.tree.Record()
	t.tree.Kill(syscall.SIGKILL)
	<-t.exited
}

// status is the output kept so far and, once the command has exited, its exit status.
func (t *terminal) status() (output string, truncated, exited bool, code *int, sig *string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.exited:
		exited = true
	default:
	}
	return string(t.output.text()), t.output.truncated, exited, t.exitCode, t.signal
}
