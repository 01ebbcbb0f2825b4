package stream

import "sync"

// Ends are the two ways an attached subscriber's stream ends: its principal may no longer see the session
// (Lost), or it detached. Each closes once; the zero value is not usable (NewEnds).
type Ends struct {
	lost       chan struct{}
	lostOnce   sync.Once
	detached   chan struct{}
	detachOnce sync.Once
}

// NewEnds makes the ends of a new subscriber.
func NewEnds() Ends { return Ends{lost: make(chan struct{}), detached: make(chan struct{})} }

// Lost is closed when the subscriber's principal may no longer see the session (its share ended): every
// face then ends the stream as if the session did not exist.
func (e *Ends) Lost() <-chan struct{} { return e.lost }

// Detached is closed once the subscription has ended.
func (e *Ends) Detached() <-chan struct{} { return e.detached }

// MarkLost closes Lost; later calls do nothing.
func (e *Ends) MarkLost() { e.lostOnce.Do(func() { close(e.lost) }) }

// EndOnce closes Detached and runs end, the first time only.
func (e *Ends) EndOnce(end func()) {
	e.detachOnce.Do(func() {
		close(e.detached)
		end()
	})
}
