package termlogin

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/confine"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// outputKeep bounds the output a login keeps for sockets that attach late or again: the tail of it.
const outputKeep = 256 << 10

// inputTimeout bounds one write of keystrokes to the PTY: a login command that stops reading its terminal
// must not hold the socket's reader.
const inputTimeout = 5 * time.Second

// Reasons a login ended.
const (
	ReasonExited    = "exited"    // the command exited by itself
	ReasonDeadline  = "deadline"  // killed at the end of its lifetime
	ReasonCancelled = "cancelled" // killed by its principal (DELETE)
	ReasonShutdown  = "shutdown"  // killed because the gateway shuts down
)

// Exit is how a login ended.
type Exit struct {
	ExitCode int    `json:"exitCode"`         // the command's exit status; -1 when a signal ended it
	Signal   string `json:"signal,omitempty"` // the signal that ended it, if one did
	Reason   string `json:"reason"`           // ReasonExited, ReasonDeadline, ReasonCancelled or ReasonShutdown
}

// OK reports whether the login succeeded: the command exited 0 by itself.
func (e Exit) OK() bool { return e.Reason == ReasonExited && e.ExitCode == 0 }

// ErrFinished is returned for input to a login that has ended.
var ErrFinished = errors.New("the login has ended")

// Login is one running (or just ended) login command.
type Login struct {
	// Static after construction.
	ID       string
	Agent    string
	MethodID string
	Owner    string // the principal's id: only they may attach, type, cancel or use its callback
	Deadline time.Time
	pid      int
	ptmx     *os.File
	tree     *agents.ProcessTree
	done     chan struct{} // closed once the command has been waited for and its output read

	mu       sync.Mutex
	out      []byte        // Guarded by mu; the tail of the output, at most outputKeep bytes.
	outStart int64         // Guarded by mu; the offset of out[0] in the whole output.
	wake     chan struct{} // Guarded by mu; closed (and replaced) when output arrives or the login ends.
	exit     *Exit         // Guarded by mu; set once the login has ended.
	kill     string        // Guarded by mu; why the gateway killed it, "" if it did not.
}

// start starts cmd on a new PTY of cols×rows. trusted is the operator's environment of the agent, which
// decides what the confined command may use.
func (l *Login) start(cmd *exec.Cmd, trusted []string, cf *confine.Confiner, extra confine.Extra, cols, rows uint16) error {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return err
	}
	if err := setSize(ptmx, cols, rows); err != nil {
		ptmx.Close()
		tty.Close()
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// A session of its own with the PTY as its controlling terminal, as a login shell has: Ctrl-C reaches
	// its foreground group, and its process group is its pid (what ProcessTree signals).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	confined, err := cf.Wrap(cmd, extra, trusted)
	if err != nil {
		ptmx.Close()
		tty.Close()
		return err
	}
	err = agents.StartProcess(cmd, confined)
	tty.Close() // the command has its own copy; reads of ptmx fail once every copy is closed
	if err != nil {
		confined.Release()
		ptmx.Close()
		return err
	}
	l.pid, l.ptmx = cmd.Process.Pid, ptmx
	l.tree.Started(l.pid)
	read := make(chan struct{})
	go l.readOutput(read)
	go l.wait(cmd, confined, read)
	return nil
}

// readOutput keeps the command's output until the PTY reports that no process holds it any more.
func (l *Login) readOutput(read chan<- struct{}) {
	defer close(read)
	buf := make([]byte, 32<<10)
	for {
		n, err := l.ptmx.Read(buf)
		if n > 0 {
			l.mu.Lock()
			l.out = append(l.out, buf[:n]...)
			if over := len(l.out) - outputKeep; over > 0 {
				l.out = append(l.out[:0], l.out[over:]...)
				l.outStart += int64(over)
			}
			l.wakeLocked()
			l.mu.Unlock()
		}
		if err != nil {
			return // EIO once the command and everything it started have closed the terminal
		}
	}
}

// wait waits for the command, kills what it left, and records how it ended once its output is in.
func (l *Login) wait(cmd *exec.Cmd, confined *confine.Confined, read <-chan struct{}) {
	err := agents.WaitProcess(cmd)
	l.tree.Reap()
	select {
	case <-read:
	case <-time.After(2 * time.Second):
		// Something that escaped the tree still holds the terminal: stop reading it.
	}
	l.ptmx.Close()
	<-read
	confined.Release()
	ex := Exit{ExitCode: cmd.ProcessState.ExitCode(), Reason: ReasonExited}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		ex.Signal = ws.Signal().String()
	}
	_ = err // the exit status says it all
	l.mu.Lock()
	if l.kill != "" {
		ex.Reason = l.kill
	}
	l.exit = &ex
	l.wakeLocked()
	l.mu.Unlock()
	close(l.done)
}

func (l *Login) wakeLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// Kill ends the login for reason (it is reported as the exit's reason); nothing once it has ended.
func (l *Login) Kill(reason string) {
	l.mu.Lock()
	if l.exit != nil || l.kill != "" {
		l.mu.Unlock()
		return
	}
	l.kill = reason
	l.mu.Unlock()
	l.tree.Record()
	l.tree.Kill(syscall.SIGKILL)
}

// killIfAsked kills a login that a Kill (a shutdown) reached while it was starting, before its process existed.
func (l *Login) killIfAsked() {
	l.mu.Lock()
	asked := l.kill != "" && l.exit == nil
	l.mu.Unlock()
	if asked {
		l.tree.Record()
		l.tree.Kill(syscall.SIGKILL)
	}
}

// Done is closed once the login has ended.
func (l *Login) Done() <-chan struct{} { return l.done }

// Read returns the output from offset on (from the oldest kept byte when offset is older), the offset that
// follows it, a channel closed when there is more, and the exit once the login has ended and all its output
// has been read.
func (l *Login) Read(offset int64) (data []byte, next int64, wake <-chan struct{}, exit *Exit) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if offset < l.outStart {
		offset = l.outStart
	}
	end := l.outStart + int64(len(l.out))
	if offset < end {
		data = append([]byte(nil), l.out[offset-l.outStart:]...)
	}
	if l.exit != nil && offset+int64(len(data)) >= end {
		ex := *l.exit
		exit = &ex
	}
	return data, offset + int64(len(data)), l.wake, exit
}

// Input types p on the login's terminal.
func (l *Login) Input(p []byte) error {
	select {
	case <-l.done:
		return ErrFinished
	default:
	}
	_ = l.ptmx.SetWriteDeadline(time.Now().Add(inputTimeout))
	_, err := l.ptmx.Write(p)
	if err != nil && errors.Is(err, os.ErrClosed) {
		return ErrFinished
	}
	return err
}

// Resize sets the terminal's size (the command gets SIGWINCH).
func (l *Login) Resize(cols, rows uint16) error {
	select {
	case <-l.done:
		return ErrFinished
	default:
	}
	if cols == 0 || rows == 0 {
		return errors.New("cols and rows must be positive")
	}
	return setSize(l.ptmx, cols, rows)
}

// setSize sets a PTY's size through its raw descriptor: pty.Setsize calls Fd, which would put the file in
// blocking mode, and a blocking read is not ended by Close nor bounded by a deadline.
func setSize(f *os.File, cols, rows uint16) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	})
	if err != nil {
		return err
	}
	return ioErr
}
