package agents

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"
)

// updateBarrier restores wire order between `session/update` notifications and the requests that follow them.
// acp-go-sdk handles notifications on one goroutine and each request on a fresh one, so a permission request
// can reach the gateway before the tool_call notification the agent sent just before it. The barrier counts
// `"session/update"` tokens as the SDK reads stdout (the tap) and lets a request wait, bounded, until that many
// notifications have been handled. A JSON string can only contain a bare quote escaped, so the token matches
// the method name and nothing inside text content.
type updateBarrier struct {
	mu        sync.Mutex
	cond      *sync.Cond
	seen      uint64 // Guarded by mu; written by the tap (the SDK's reader goroutine).
	handled   uint64 // Guarded by mu; written by the SDK's notification goroutine.
	maxWait   time.Duration
	carryOver []byte // Owned by the tap: the tail of the previous read, for tokens split across reads.
}

var updateToken = []byte(`"session/update"`)

func newUpdateBarrier() *updateBarrier {
	b := &updateBarrier{maxWait: 250 * time.Millisecond}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// tap wraps the agent's stdout. Reads block until ready is closed: the SDK starts its reader goroutine in
// NewConnection, before SetLogger can be called without a data race.
func (b *updateBarrier) tap(r io.Reader, ready <-chan struct{}) io.Reader {
	return &tapReader{r: r, b: b, ready: ready}
}

func (b *updateBarrier) processed() {
	b.mu.Lock()
	b.handled++
	b.cond.Broadcast()
	b.mu.Unlock()
}

// wait blocks until every notification seen so far is handled, ctx ends, or maxWait passes.
func (b *updateBarrier) wait(ctx context.Context) {
	b.mu.Lock()
	target := b.seen
	if b.handled >= target {
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { b.mu.Lock(); b.cond.Broadcast(); b.mu.Unlock() })
	defer stop()
	t := time.AfterFunc(b.maxWait, func() { b.mu.Lock(); b.cond.Broadcast(); b.mu.Unlock() })
	defer t.Stop()
	deadline := time.Now().Add(b.maxWait)
	b.mu.Lock()
	for b.handled < target && ctx.Err() == nil && time.Now().Before(deadline) {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

type tapReader struct {
	r     io.Reader
	b     *updateBarrier
	ready <-chan struct{}
}

func (t *tapReader) Read(p []byte) (int, error) {
	<-t.ready
	n, err := t.r.Read(p)
	if n > 0 {
		t.count(p[:n])
	}
	return n, err
}

func (t *tapReader) count(p []byte) {
	b := t.b
	found := uint64(0)
	// A token split across two reads: look in the seam between the carried tail and this read.
	if len(b.carryOver) > 0 {
		seam := append(b.carryOver, p[:min(len(p), len(updateToken)-1)]...)
		found += uint64(bytes.Count(seam, updateToken))
	}
	found += uint64(bytes.Count(p, updateToken))
	keep := min(len(p), len(updateToken)-1)
	b.carryOver = append(b.carryOver[:0], p[len(p)-keep:]...)
	if found > 0 {
		b.mu.Lock()
		b.seen += found
		b.mu.Unlock()
	}
}
