package inproc

import (
	"io"
	"sync"
)

// gatedReader is the agent's input as the SDK sees it. It does two things:
//
//   - It holds back the first Read until open is called. acp-go-sdk starts its reader goroutine inside
//     NewAgentSideConnection, but SetLogger and Agent.Attach happen afterwards, unsynchronized: without the
//     gate the reader can log (or dispatch a handler) while they are being written, which is a data race.
//   - It remembers the first error of the underlying reader, so that Serve can tell a clean EOF from a
//     broken stream: the SDK only reports that its reader loop ended, not why.
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

// err returns the first error the underlying reader returned, or nil.
func (r *gatedReader) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.firstErr
}
