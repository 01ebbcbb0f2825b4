package takeover

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/store"
)

// Host is what closing the stored logs left open asks of the registry. The registry implements it with a
// small adapter, so none of it becomes a public method of the Registry the faces use.
type Host interface {
	// Cold builds the session an entry at revision rev describes, without its log, and its store link
	// (not started): a private session, never listed.
	Cold(e store.DirEntry, rev uint64) (*core.Session, *durable.Link, error)
	// Sessions are the sessions this node runs or holds stored.
	Sessions() []*core.Session
	// StandDown ends this node's run of s: another node took the session over.
	StandDown(s *core.Session)
}

// Config is what the takeover reads of the registry's settings; the registry builds it once.
type Config struct {
	Store       store.Store
	Cluster     store.Cluster // nil outside mode c
	NodeID      string
	Incarnation string // this process, in its entries
	Logger      *slog.Logger
	// OrphanSweepAfter is how long the node watch runs before it sweeps the directory for orphans once.
	OrphanSweepAfter time.Duration
}

// Taker closes, for this node, the stored logs their writer left open: its own after a restart (Settle),
// and a lost node's (WatchNodes).
type Taker struct {
	host Host    // Static after construction.
	cfg  *Config // Static after construction.
}

// New is the takeover of the registry h, with its settings cfg.
func New(h Host, cfg *Config) *Taker { return &Taker{host: h, cfg: cfg} }

// CloseForLoss is the takeover of a lost node's session as the node watch runs it once: the claim, the
// closing frames and the release.
func (t *Taker) CloseForLoss(ctx context.Context, e store.DirEntry, rev uint64) (store.DirEntry, error) {
	done, _, err := t.closeStored(ctx, e, rev, nodeLostClose)
	return done, err
}

// ListDir is the directory's List with entries that do not decode reported in the gateway log and left out,
// so one damaged entry does not keep every other session from being restored or taken over.
func (t *Taker) ListDir(ctx context.Context) ([]store.DirEntry, []uint64, error) {
	entries, revs, err := t.cfg.Store.Dir().List(ctx)
	var ue *store.UndecodableEntries
	if errors.As(err, &ue) {
		t.cfg.Logger.Error("session directory: entries that do not decode are left out (their sessions are not restored)", "count", len(ue.Keys), "keys", ue.Keys)
		err = nil
	}
	return entries, revs, err
}
