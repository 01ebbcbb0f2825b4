package demo

import (
	"bytes"
	"io"
	"sync"
)

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
