package durable

import "sync"

// Retired holds the counters of the write-behinds that stopped, so the store's totals keep the sessions
// already closed or shut down.
type Retired struct {
	mu                   sync.Mutex
	errors, frames, gaps uint64 // Guarded by mu.
}

// Totals are the counters of every write-behind retired so far.
func (r *Retired) Totals() (errors, frames, gaps uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errors, r.frames, r.gaps
}

// retire adds the link's write-behind counters to the retired ones, once, before it stops.
func (d *Link) retire() {
	st, frames := d.Stats()
	r := d.cfg.Retired
	r.mu.Lock()
	r.errors += st.Errors
	r.frames += frames
	r.gaps += st.Gaps
	r.mu.Unlock()
	d.mu.Lock()
	d.retired = true
	d.mu.Unlock()
}
