package agents

import (
	"context"
	"io"
	"sync"
	"time"
)

// updateBarrier restores wire order between `session/update` notifications and the requests that follow them.
// acp-go-sdk handles notifications on one goroutine and each request on a fresh one, so a permission request
// can reach the gateway before the tool_call notification the agent sent just before it. The tap counts
// `"method":"session/update"` lines as the SDK reads stdout, and a request waits, bounded, until that many
// notifications have been handled. A miscount (a line whose params hold that exact member) is healed when a
// wait times out, so it never delays later requests.
type updateBarrier struct {
	mu      sync.Mutex
	cond    *sync.Cond
	seen    uint64 // Guarded by mu; written by the tap (the SDK's reader goroutine).
	handled uint64 // Guarded by mu; written by the SDK's notification goroutine.
	maxWait time.Duration
}

func newUpdateBarrier() *updateBarrier {
	b := &updateBarrier{maxWait: 250 * time.Millisecond}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// tap wraps the agent's stdout. Reads block until ready is closed: the SDK starts its reader goroutine in
// NewConnection, before SetLogger can be called without a data race.
func (b *updateBarrier) tap(r io.Reader, ready <-chan struct{}) *tapReader {
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
	if b.handled < target && ctx.Err() == nil {
		// Timed out: what was counted never arrived. Forget it rather than delay every later request.
		b.seen -= target - b.handled
	}
	b.mu.Unlock()
}

type tapReader struct {
	r     io.Reader
	b     *updateBarrier
	ready <-chan struct{}
	lines lineWatch // Owned by the SDK's reader goroutine (the only caller of Read).
}

func (t *tapReader) Read(p []byte) (int, error) {
	<-t.ready
	n, err := t.r.Read(p)
	if n > 0 {
		if found := t.lines.scan(p[:n]); found > 0 {
			t.b.mu.Lock()
			t.b.seen += uint64(found)
			t.b.mu.Unlock()
		}
	}
	return n, err
}
