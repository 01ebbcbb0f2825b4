package durable

import (
	"errors"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// Host is what a store link asks of the registry that holds its session. The registry implements it with a
// small adapter, so none of it becomes a public method of the Registry the faces use.
type Host interface {
	Now() time.Time
	// StoppedLocked is ErrShuttingDown or ErrClosed once the registry's shutdown or s's close has begun. The
	// caller holds s's lock.
	StoppedLocked(s *core.Session) error
	// StandDown ends this node's run of s: another node took the session over (the store refused a write).
	StandDown(s *core.Session)
}

// Config is what a store link reads of the registry's settings; the registry builds it once.
type Config struct {
	Store       store.Store
	NodeID      string // this node, the owner its entries name
	Incarnation string // this process, in its entries
	Clustered   bool   // mode c: an entry that no longer names this process is another node's now
	// StartTimeout bounds loading a stored log.
	StartTimeout time.Duration
	// Retired keeps the counters of the write-behinds that stopped (the registry's store stats).
	Retired *Retired
}

// errTakenOver is a directory write refused because the entry is no longer this process's.
var errTakenOver = errors.New("the session was taken over by another node")
