package inproc

import "sync"

// Tracker counts an agent's in-flight work (handlers that send to the peer and the goroutines they start) so
// that Serve can wait for all of it before it returns. Unlike sync.WaitGroup it may be entered while
// someone waits: the SDK can start a handler goroutine just before its reader stops, and such a late
// handler is simply refused once the Tracker is closed. The zero value is ready to use.
type Tracker struct {
	mu     sync.Mutex
	cond   *sync.Cond // Signals n reaching zero; uses mu.
	n      int        // Guarded by mu.
	closed bool       // Guarded by mu.
}

// Enter registers one unit of work. It reports false once CloseAndWait has been called; the caller must
// then not start the work.
func (t *Tracker) Enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.n++
	return true
}

// Leave ends one unit of work started by a successful Enter.
func (t *Tracker) Leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.cond != nil {
		t.cond.Broadcast()
	}
}

// CloseAndWait refuses new work and waits until all entered work has left.
func (t *Tracker) CloseAndWait() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.cond == nil {
		t.cond = sync.NewCond(&t.mu)
	}
	for t.n > 0 {
		t.cond.Wait()
	}
}
