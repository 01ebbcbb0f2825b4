package demo

import (
	"bytes"
	"io"
	"sync"
)

// gatedReader is the agent's input as the SDK sees it. It does two things:
//
//   - It holds back the first Read until open is called. acp-go-sdk starts its
//     reader goroutine inside NewAgentSideConnection, but SetLogger and our
//     own setup happen afterwards, unsynchronized: without the gate the
//     reader can log (or dispatch a handler) while they are being written,
//     which is a data race.
//   - It remembers the first error of the underlying reader, so that Serve
//     can tell a clean EOF from a broken stream: the SDK only reports that
//     its reader loop ended, not why.
type gatedReader struct {
	r    io.Reader
	gate chan struct{} // Closed by open.

	mu       sync.Mutex
	firstErr error // Guarded by mu.
}

func newGatedReader(r io.Reader) *gatedReader {
	return &gatedReader{r: r, gate: make(chan struct{})}
}

// open lets reads through. Call it once, after the connection is set up.
func (r *gatedReader) open() { close(r.gate) }

func (r *gatedReader) Read(p []byte) (int, error) {
	<-r.gate
	n, err := r.r.Read(p)
	if err != nil {
		r.mu.Lock()
		if r.firstErr == nil {
			r.firstErr = err
		}
		r.mu.Unlock()
	}
	return n, err
}

func (r *gatedReader) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.firstErr
}

// watchWriter tells the agent when a given message has been written to the
// peer. A handler's response is written by the SDK after the handler has
// returned, so this is the only way to send something strictly after a
// response (the available_commands_update that follows session/new).
// acp-go-sdk writes each JSON-RPC message with exactly one Write call.
type watchWriter struct {
	w io.Writer

	mu      sync.Mutex
	watches map[string]chan struct{} // marker → closed after a write containing it. Guarded by mu.
}

func newWatchWriter(w io.Writer) *watchWriter {
	return &watchWriter{w: w, watches: make(map[string]chan struct{})}
}

// watch returns a channel that is closed once a message containing marker
// has been written successfully.
func (ww *watchWriter) watch(marker string) <-chan struct{} {
	ch := make(chan struct{})
	ww.mu.Lock()
	ww.watches[marker] = ch
	ww.mu.Unlock()
	return ch
}

// unwatch drops a watch that is no longer wanted.
func (ww *watchWriter) unwatch(marker string) {
	ww.mu.Lock()
	delete(ww.watches, marker)
	ww.mu.Unlock()
}

func (ww *watchWriter) Write(p []byte) (int, error) {
	n, err := ww.w.Write(p)
	if err != nil {
		return n, err
	}
	ww.mu.Lock()
	for marker, ch := range ww.watches {
		if bytes.Contains(p, []byte(marker)) {
			close(ch)
			delete(ww.watches, marker)
		}
	}
	ww.mu.Unlock()
	return n, nil
}
