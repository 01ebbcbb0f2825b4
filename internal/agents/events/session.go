package events

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/inproc"
	evt "github.com/acp-gateway/gateway/internal/translate/events"
)

// session is one ACP session: one process and its translation state.
type session struct {
	// Static after construction.
	a      *agent
	id     acp.SessionId
	cwd    string
	cmd    *exec.Cmd
	tree   *agents.ProcessTree // what the process started, killed with it
	stderr *agents.TailBuffer

	stdinMu   sync.Mutex     // serialises writes so each event is one whole line
	stdin     io.WriteCloser // agents.NewStdinWriter (writes have a deadline); closed (once) by closeStdin
	stdinOnce sync.Once
	stuck     atomic.Pointer[string] // set once a write to stdin timed out and the process was killed

	exited     chan struct{} // closed once the process is reaped and its group killed
	exitErr    error         // written before exited is closed
	readerDone chan struct{} // closed when the stdout reader has ended
	stopOnce   sync.Once

	// mu guards the translation and the turn, and is held while the updates of one event are sent, so the
	// client sees them in the order the process printed them.
	mu      sync.Mutex
	tctx    *evt.Context // Guarded by mu.
	turn    *turn        // Guarded by mu; nil between turns.
	turnSeq int          // Guarded by mu.
	dead    bool         // Guarded by mu; the process has exited.
	dropped int          // Guarded by mu; stdout lines dropped (not JSON, too long).
}

// turn is one running session/prompt.
type turn struct {
	id string
	// ctx ends when the turn ends, on session/cancel and on shutdown; permission requests use it.
	ctx        context.Context
	end        context.CancelFunc
	cancelled  chan struct{} // closed by session/cancel
	cancelOnce sync.Once
	result     chan turnResult // buffered; written once, by whoever ends the turn (holding session.mu)
}

type turnResult struct {
	stop string
	err  error
}

// startSession starts the process. The caller holds a.mu.
func startSession(a *agent, id acp.SessionId, cwd string) (*session, error) {
	s := &session{
		a: a, id: id, cwd: cwd,
		stderr:     agents.NewTailBuffer(a.cfg.StderrBytes),
		exited:     make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	s.tctx = evt.NewContext(evt.Config{
		SessionID: string(id), Cwd: cwd, Resolve: filepath.EvalSymlinks,
		MaxFieldBytes: a.cfg.MaxFieldBytes, KeepSecrets: a.cfg.KeepSecrets,
	})
	tree := agents.NewProcessTree(a.cfg.StopGrace)
	cmd := exec.Command(a.cfg.Command, a.cfg.Args...)
	cmd.Dir = cwd
	// Never nil: nothing is inherited. The marker lets what the process starts be found after it exits.
	cmd.Env = append(append([]string{}, a.cfg.Env...), tree.Env())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = s.stderr
	if a.cfg.Stderr != nil {
		cmd.Stderr = io.MultiWriter(s.stderr, a.cfg.Stderr)
	}
	cmd.WaitDelay = a.cfg.StopGrace
	confined, err := a.cfg.Confiner.Wrap(cmd, a.cfg.Confine, a.cfg.Env)
	if err != nil {
		return nil, err
	}
	// stdin is an os.Pipe rather than cmd.StdinPipe so writes take deadlines (agents.NewStdinWriter); stdout
	// is one so that Wait does not depend on the reader: the reader sees EOF once the process and everything
	// it started are gone.
	inR, inW, err := os.Pipe()
	if err != nil {
		confined.Release()
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		confined.Release()
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, pw
	err = agents.StartProcess(cmd, confined)
	inR.Close() // the process has its own copies
	pw.Close()
	if err != nil {
		confined.Release()
		inW.Close()
		pr.Close()
		return nil, err
	}
	tree.Started(cmd.Process.Pid)
	s.cmd, s.tree = cmd, tree
	s.stdin = agents.NewStdinWriter(inW, a.cfg.WriteTimeout, s.stdinStuck)
	go func() {
		err := agents.WaitProcess(cmd)
		// Whatever the process started goes with it, whether it was stopped or exited by itself: its group,
		// and what left the group (setsid, double forks). That also closes the stdout pipe.
		tree.Reap()
		confined.Release()
		s.exitErr = err
		close(s.exited)
	}()
	go s.read(pr)
	return s, nil
}

// writeLine writes one event line to the process's stdin.
func (s *session) writeLine(b []byte) error {
	s.stdinMu.Lock()
	defer s.stdinMu.Unlock()
	_, err := s.stdin.Write(append(b, '\n'))
	return err
}

func (s *session) closeStdin() { s.stdinOnce.Do(func() { _ = s.stdin.Close() }) }

// stdinStuck kills a process that stopped reading its stdin. It runs on the writing goroutine (holding
// stdinMu), so it only signals: the reader sees the exit and ends a running turn with the reason.
func (s *session) stdinStuck(err error) {
	msg := err.Error() + "; the agent was stopped"
	s.stuck.CompareAndSwap(nil, &msg)
	s.a.cfg.Logger.Warn("events agent: process stopped reading its stdin; killing it", "session", s.id, "err", err)
	s.tree.Record()
	s.tree.Kill(syscall.SIGKILL)
}

// read is the stdout reader: it translates each line, then, at EOF, waits for the process and ends a
// running turn with the exit.
func (s *session) read(r *os.File) {
	defer close(s.readerDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, s.a.cfg.MaxLineBytes)
		if tooLong {
			s.mu.Lock()
			s.drop("line too long", nil)
			s.mu.Unlock()
		} else if len(line) > 0 {
			s.handle(line)
		}
		if err != nil {
			break
		}
	}
	<-s.exited
	s.processGone()
}

// readLine reads one line without its newline. A line longer than max is consumed and reported tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, e := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		return line, tooLong, e
	}
}

// maxLoggedDrops bounds how many dropped lines are logged (with an excerpt) per session; every 1000th
// after that is logged with the count only.
const maxLoggedDrops = 16

// drop counts (and logs, bounded) a stdout line that is not an event. Caller holds s.mu.
func (s *session) drop(why string, line []byte) {
	s.dropped++
	switch {
	case s.dropped <= maxLoggedDrops:
		if len(line) > 256 {
			line = line[:256]
		}
		s.a.cfg.Logger.Warn("events agent: dropped stdout line", "session", s.id, "why", why, "line", string(line), "dropped", s.dropped)
	case s.dropped%1000 == 0:
		s.a.cfg.Logger.Warn("events agent: dropped stdout lines", "session", s.id, "dropped", s.dropped)
	}
}

// handle translates and sends one stdout line.
func (s *session) handle(line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := s.tctx.ApplyLine(line)
	if res.Malformed {
		s.drop("not an event", line)
		return
	}
	s.sendAll(res.Updates)
	if p := res.Permission; p != nil && s.turn != nil {
		t := s.turn
		if s.a.work.Enter() {
			go s.askPermission(t, p)
		}
	} else if p != nil {
		// Outside a turn nobody can answer: deny at once.
		d := s.tctx.PermissionDecision(p.ID, nil, errors.New("no turn is running"))
		if s.a.work.Enter() {
			go func() { // not under mu: a stuck stdin must not stall stdout
				defer s.a.work.Leave()
				_ = s.writeLine(d.Line())
			}()
		}
	}
	if res.Done && s.turn != nil {
		s.finish(turnResult{stop: res.StopReason})
	}
}

// sendAll sends updates to the client. Caller holds s.mu.
func (s *session) sendAll(updates [][]byte) {
	for _, p := range updates {
		var n acp.SessionNotification
		if err := json.Unmarshal(p, &n); err != nil {
			s.a.cfg.Logger.Error("events agent: translation produced an update the SDK rejects", "err", err)
			continue
		}
		if err := s.a.conn.SessionUpdate(s.a.base, n); err != nil {
			return // the connection is going away
		}
	}
}

// finish ends the running turn with r. Caller holds s.mu.
func (s *session) finish(r turnResult) {
	t := s.turn
	s.turn = nil
	t.result <- r
	t.end()
}

// askPermission forwards a permission request to the client and writes the decision back.
func (s *session) askPermission(t *turn, p *evt.PermissionAsk) {
	defer s.a.work.Leave()
	var raw json.RawMessage
	var req acp.RequestPermissionRequest
	err := json.Unmarshal(p.Params, &req)
	if err == nil {
		var resp acp.RequestPermissionResponse
		resp, err = s.a.conn.RequestPermission(t.ctx, req)
		if err == nil {
			raw, err = json.Marshal(resp)
		}
	}
	s.mu.Lock()
	d := s.tctx.PermissionDecision(p.ID, raw, err)
	s.mu.Unlock()
	_ = s.writeLine(d.Line())
}

// prompt runs one turn.
func (s *session) prompt(blocks []acp.ContentBlock) (acp.PromptResponse, error) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return acp.PromptResponse{}, s.exitError("agent process has exited")
	}
	if s.turn != nil {
		s.mu.Unlock()
		return acp.PromptResponse{}, acp.NewInvalidRequest(map[string]any{"error": "a turn is already running"})
	}
	s.turnSeq++
	ctx, end := context.WithCancel(s.a.base)
	// Turn ids include the session id so message ids (`<turnId>-answer`) never repeat across sessions.
	t := &turn{id: string(s.id) + "-turn-" + strconv.Itoa(s.turnSeq), ctx: ctx, end: end, cancelled: make(chan struct{}), result: make(chan turnResult, 1)}
	s.turn = t
	s.tctx.BeginTurn(t.id)
	s.mu.Unlock()
	defer end()

	if blocks == nil {
		blocks = []acp.ContentBlock{}
	}
	line, _ := json.Marshal(map[string]any{"type": evt.TypePrompt, "turnId": t.id, "text": inproc.PromptText(blocks), "prompt": blocks})
	if err := s.writeLine(line); err != nil {
		// The process is gone or going; the reader ends the turn with the exit. Wait for that below.
		s.a.cfg.Logger.Debug("events agent: writing the prompt failed", "session", s.id, "err", err)
	}

	cancelled := t.cancelled
	var grace <-chan time.Time
	for {
		select {
		case r := <-t.result:
			return acp.PromptResponse{StopReason: acp.StopReason(r.stop)}, r.err
		case <-cancelled:
			cancelled = nil
			timer := time.NewTimer(s.a.cfg.CancelGrace)
			defer timer.Stop()
			grace = timer.C
		case <-grace:
			s.giveUp(t, "cancel grace expired")
			r := <-t.result // giveUp or the reader has ended the turn
			return acp.PromptResponse{StopReason: acp.StopReason(r.stop)}, r.err
		case <-s.a.base.Done():
			s.giveUp(t, "shutting down")
			r := <-t.result
			return acp.PromptResponse{StopReason: acp.StopReason(r.stop)}, r.err
		}
	}
}

// giveUp ends t as cancelled (or shutting down) when the process did not end it. The result is read by
// prompt's loop; if the reader ended the turn first, its result stands.
func (s *session) giveUp(t *turn, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turn != t {
		return
	}
	s.a.cfg.Logger.Debug("events agent: ending turn without done", "session", s.id, "turn", t.id, "why", why)
	updates, stop := s.tctx.EndTurn("")
	if s.a.base.Err() != nil {
		s.finish(turnResult{err: errShuttingDown})
		return
	}
	s.sendAll(updates)
	s.finish(turnResult{stop: stop})
}

// cancel handles session/cancel.
func (s *session) cancel() {
	s.mu.Lock()
	t := s.turn
	if t == nil {
		s.mu.Unlock()
		return
	}
	s.tctx.Cancel()
	s.mu.Unlock()
	t.cancelOnce.Do(func() { close(t.cancelled) })
	t.end() // pending permission requests end and are denied
	line, _ := json.Marshal(map[string]string{"type": evt.TypeCancel, "turnId": t.id})
	_ = s.writeLine(line)
}

// processGone ends a running turn after the process exited: with the exit as a JSON-RPC error, or
// cancelled when a cancel had been requested.
func (s *session) processGone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dead = true
	if s.turn == nil {
		return
	}
	cancelled := s.tctx.CancelRequested()
	updates, stop := s.tctx.EndTurn("error")
	s.sendAll(updates)
	if cancelled {
		s.finish(turnResult{stop: stop})
		return
	}
	s.finish(turnResult{err: s.exitError("agent process exited during the turn")})
}

// exitError describes the process's exit for a JSON-RPC error. Valid once exited is closed, "running"
// before.
func (s *session) exitError(msg string) error {
	status := "running"
	select {
	case <-s.exited:
		status = "exited"
		if s.exitErr != nil {
			status = s.exitErr.Error()
		}
	default:
	}
	if stuck := s.stuck.Load(); stuck != nil {
		msg += ": " + *stuck
	}
	return acp.NewInternalError(map[string]any{"error": msg, "exit": status, "stderr": s.stderr.Tail(1024)})
}

// shutdown stops the process: close stdin → grace → SIGTERM to the group → grace → SIGKILL to the group
// (what it started is killed after it, see agents.ProcessTree), then waits for the reader.
func (s *session) shutdown() {
	s.stopOnce.Do(func() {
		s.tree.Record() // while the process is alive its descendants are still findable as such
		s.closeStdin()
		if !s.waitExit(s.a.cfg.StopGrace) {
			s.tree.Record()
			s.tree.Kill(syscall.SIGTERM)
			if !s.waitExit(s.a.cfg.StopGrace) {
				s.tree.Record()
				s.tree.Kill(syscall.SIGKILL)
			}
		}
		<-s.exited
		<-s.readerDone
	})
}

func (s *session) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}
