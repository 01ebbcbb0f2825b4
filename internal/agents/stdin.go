package agents

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// defaultWriteTimeout bounds one write to an agent's stdin. A healthy agent reads its stdin continuously; only
// a write that finds the pipe's 64 KiB buffer full waits at all.
const defaultWriteTimeout = 30 * time.Second

// stdinWriter writes to an agent process's stdin with a deadline per write, so an agent that stops reading
// cannot hang the gateway's callers (prompt, set_mode, cancel) on a full pipe. acp-go-sdk writes each message
// with one Write call under its own lock, so there is one writer at a time.
type stdinWriter struct {
	f       *os.File        // Static after construction; the parent's end of the pipe (os.Pipe: pollable, so deadlines work).
	timeout time.Duration   // Static after construction.
	stuck   func(err error) // Static after construction.
}

// NewStdinWriter wraps the gateway's end of an agent's stdin pipe (from os.Pipe, not cmd.StdinPipe: only a
// pollable file takes deadlines) so each write must complete within timeout (0 = 30 s). stuck is called, on
// the writing goroutine, when one does not; the stream is then unusable and the caller should kill the agent.
func NewStdinWriter(f *os.File, timeout time.Duration, stuck func(err error)) io.WriteCloser {
	return &stdinWriter{f: f, timeout: cmpDur(timeout, defaultWriteTimeout), stuck: stuck}
}

func (w *stdinWriter) Write(p []byte) (int, error) {
	if err := w.f.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
		return 0, err
	}
	n, err := w.f.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// Part of a message may be in the pipe: the stream is unusable, so the agent goes.
		err = fmt.Errorf("agent stopped reading its input: a %d-byte write to its stdin did not complete within %s (%d bytes written)", len(p), w.timeout, n)
		w.stuck(err)
	}
	return n, err
}

func (w *stdinWriter) Close() error { return w.f.Close() }
