// Package cold holds what a cold session lists before its first use loads its log (a stored session after a
// restart, a copy nobody uses), and that first use's load, run once for every concurrent caller. The session
// guards a State with its lock and hands the lock to Load.
package cold

import (
	"sync"

	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/store"
)

// State is what a cold session lists, and its load in progress.
type State struct {
	Title    string
	LastTurn *turns.LastTurnView
	LastSeq  uint64
	Status   store.Status // the status listed: the entry's (a follower's: the latest entry's, or its own fold's)
	Reason   string
	Rev      uint64 // the directory revision listed (a follower: an older entry the watch delivers late is not)
	attempt  *load  // the load in progress, nil when none
}

// load is one attempt at loading a cold session; every concurrent first use waits for the same one.
type load struct {
	done chan struct{}
	err  error // set before done is closed
}

// TakeEntry lists what the directory entry at rev says: its title, last turn and head always, its status
// unless the entry is behind what the state lists already (frames a paused copy folded, or a newer entry).
func (c *State) TakeEntry(e store.DirEntry, title string, lastTurn *turns.LastTurnView, rev uint64) {
	if rev >= c.Rev && e.LastSeq >= c.LastSeq {
		c.Status, c.Reason, c.Rev = e.Status, e.Reason, rev
	}
	c.Title, c.LastTurn, c.LastSeq = title, lastTurn, e.LastSeq
}

// Load runs fn once for every caller that comes while it runs: they wait for it and get its error; a failed
// load is tried again by the next caller. The caller holds mu, the session's lock, which Load releases
// before it waits or runs fn. ran reports whether this caller ran fn.
func (c *State) Load(mu sync.Locker, fn func() error) (ran bool, err error) {
	if h := c.attempt; h != nil {
		mu.Unlock()
		<-h.done
		return false, h.err
	}
	h := &load{done: make(chan struct{})}
	c.attempt = h
	mu.Unlock()
	h.err = fn()
	if h.err != nil {
		mu.Lock()
		c.attempt = nil
		mu.Unlock()
	}
	close(h.done)
	return true, h.err
}
