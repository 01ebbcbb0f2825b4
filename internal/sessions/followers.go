package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/sessions/internal/follow"
	"github.com/acp-gateway/gateway/internal/store"
)

// The registry's followers (package follow): copies of other nodes' sessions, listed from the directory, and
// the removals that must not list one again.

// followerFromDirectory is the lookup of a session this node does not hold yet: its directory entry, if
// another node owns it, becomes a cold follower.
func (r *Registry) followerFromDirectory(id string) (*Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), durable.DirWriteTimeout)
	defer cancel()
	e, rev, err := r.cfg.Store.Dir().Get(ctx, id)
	switch {
	case errors.Is(err, sessionerr.ErrNotFound):
		return nil, sessionerr.ErrNotFound
	case err != nil && !validSessionID(id):
		return nil, sessionerr.ErrNotFound // no store key can name it
	case err != nil:
		return nil, fmt.Errorf("%w: %v", sessionerr.ErrStoreUnavailable, err)
	case e.Owner == r.cfg.NodeID || e.Owner == "" || e.Status == store.StatusClosed:
		return nil, sessionerr.ErrNotFound // ours (being removed), or closed
	}
	return r.addFollower(e, rev)
}

// addFollower registers a cold follower for e, or returns the one already registered.
func (r *Registry) addFollower(e store.DirEntry, rev uint64) (*Session, error) {
	s, err := r.coldSessionOf(e, rev, true) // the cwd is on the owner's machine: not opened, no descriptor held
	if err != nil {
		return nil, err
	}
	follow.New(followHost{r}, r.followCfg, s, e, rev)
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.followers[e.ID]; ok {
		return cur, nil
	}
	if r.closing {
		return nil, sessionerr.ErrShuttingDown
	}
	if r.removed.after(e.ID, rev) {
		return nil, sessionerr.ErrNotFound // a Get that read the entry before its removal, which the watch has applied
	}
	r.followers[e.ID] = s
	return s, nil
}

// tombstones are the directory revisions at which the latest removals happened (deletes, or entries that say
// closed), the last tombstoneKeep of them.
type tombstones struct {
	rev   map[string]uint64
	order []string
}

const tombstoneKeep = 4096

func (t *tombstones) add(id string, rev uint64) {
	if t.rev == nil {
		t.rev = map[string]uint64{}
	}
	if _, ok := t.rev[id]; !ok {
		t.order = append(t.order, id)
		if len(t.order) > tombstoneKeep {
			delete(t.rev, t.order[0])
			t.order = t.order[1:]
		}
	}
	t.rev[id] = max(t.rev[id], rev)
}

// after reports whether id was removed at a revision after rev.
func (t *tombstones) after(id string, rev uint64) bool {
	r, ok := t.rev[id]
	return ok && r > rev
}

func (r *Registry) removeFollower(s *Session) {
	r.mu.Lock()
	if r.followers[s.ID] == s {
		delete(r.followers, s.ID)
	}
	r.mu.Unlock()
}

// pauseIdleFollowers pauses the followers nobody used since cutoff; it reports how many.
func (r *Registry) pauseIdleFollowers(cutoff time.Time) int {
	n := 0
	for _, s := range r.followerList() {
		if follow.Of(s).Pause(cutoff) {
			n++
		}
	}
	return n
}

// followerList returns the followers.
func (r *Registry) followerList() []*Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Session, 0, len(r.followers))
	for _, s := range r.followers {
		out = append(out, s)
	}
	return out
}

// validSessionID reports whether id can be a session id the store holds (one subject token).
func validSessionID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
