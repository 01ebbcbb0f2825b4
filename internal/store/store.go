package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
)

// Store makes session logs and the session directory outlive the process (docs/cluster-design.md §1, "The store seam").
// Config.Store == nil is memory mode: nothing here is called and the live path is unchanged. Faces never call
// a Store; only the session lifecycle does.
type Store interface {
	// Persist starts the write-behind of an owned session's log: one goroutine reads l after seq from and
	// publishes each frame in order. It never blocks l.Append; it holds unacknowledged frames in the ring
	// through l.Pin.
	Persist(sid, epoch string, l *eventlog.Log, from uint64) Persister
	// Feed calls fn for every stored frame of sid in log order (the reader rule), then, if live, for each
	// frame stored later, until ctx ends. fn gets the stored bytes unchanged. Not live, it returns the stream
	// sequence of the last message it consumed (kept or dropped): the fence for Fork.
	Feed(ctx context.Context, sid string, live bool, fn func(StoredFrame) error) (fence uint64, err error)
	// Follow is a live Feed for a follower cache (mode c): it calls caughtUp once, when it has read what
	// was stored when it began, and returns when ctx ends (nil) or the read fails.
	Follow(ctx context.Context, sid string, fn func(StoredFrame) error, caughtUp func()) error
	// Fork appends frames as the single writer of a session the caller just claimed. Its first publish expects
	// fence as the subject's last stream sequence: ErrFenced means a frame landed since the caller's Feed.
	Fork(ctx context.Context, sid string, fence uint64, frames []StoredFrame) error
	// Remove purges the session's log, then deletes its directory entry.
	Remove(ctx context.Context, sid string) error
	Dir() Directory
}

// StoredFrame is one frame as the store holds it.
type StoredFrame struct {
	Seq   uint64
	Epoch string
	Frame []byte // the exact bytes the live log held; empty for a gap marker
	GapTo uint64 // > 0: frames Seq..GapTo were never stored
}

// Persister is the write-behind of one session's log.
type Persister interface {
	Durable() uint64                 // every frame with seq <= Durable() is acknowledged by the store
	Flush(ctx context.Context) error // waits until Durable() reaches the log head seen at the call
	Stats() PersistStats
	Stop()
	// Fenced is closed when the store refused a write because another node appended to the session's log
	// (it took the session over): the writer has stopped, and Flush returns an ErrFenced.
	Fenced() <-chan struct{}
}

// PersistStats is what a persister reports for metrics and GET /v1/nodes.
type PersistStats struct {
	LagFrames     uint64
	LagBytes      int64
	OldestUnacked time.Duration // age of the oldest unacknowledged frame; 0 when none
	Errors        uint64
	Gaps          uint64
}

// Directory maps session ids to what the log does not carry.
type Directory interface {
	Get(ctx context.Context, sid string) (DirEntry, uint64, error) // entry and revision; ErrNotFound
	Create(ctx context.Context, e DirEntry) (uint64, error)        // ErrRevision when the key exists
	Update(ctx context.Context, e DirEntry, rev uint64) (uint64, error)
	Delete(ctx context.Context, sid string) error
	// List returns every current entry with its revision (start-up recovery). Entries that do not decode are
	// left out and named in an *UndecodableEntries error returned with the others.
	List(ctx context.Context) ([]DirEntry, []uint64, error)
	// Watch calls fn for every current entry, then for each change, until ctx ends.
	Watch(ctx context.Context, fn func(e DirEntry, rev uint64, deleted bool)) error
}

// DirEntry is a session's directory record.
type DirEntry struct {
	ID             string          `json:"id"`
	Agent          string          `json:"agent"`
	Cwd            string          `json:"cwd"`
	AdditionalDirs []string        `json:"additionalDirectories,omitempty"` // checked again before a re-attach uses them
	Policy         string          `json:"policy"`
	CreatedAt      time.Time       `json:"createdAt"`
	Owner          string          `json:"owner,omitempty"`       // node id
	Incarnation    string          `json:"incarnation,omitempty"` // the owner process
	Status         Status          `json:"status"`
	Reason         string          `json:"reason,omitempty"`
	Epoch          string          `json:"epoch"`
	AgentSessionID string          `json:"agentSessionId,omitempty"`
	CanLoad        bool            `json:"canLoad,omitempty"`
	CanResume      bool            `json:"canResume,omitempty"`
	View           json.RawMessage `json:"view,omitempty"` // modes, config options, agent info, title, lastTurn
	Closer         string          `json:"closer,omitempty"`
	Clean          bool            `json:"clean,omitempty"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	// LastSeq is the head of the log when the entry was written, for listing a cold session.
	LastSeq uint64 `json:"lastSeq,omitempty"`
	// Principal owns the session and Shares are who it is shared with (owner.go, share.go).
	Principal *principal.Principal `json:"principal,omitempty"`
	Shares    []Share              `json:"shares,omitempty"`
	// ClientMCP are the MCP servers the client added, values included: a re-attach passes them to the
	// agent again. They make the store as sensitive as the agents file, and never leave it in a response.
	ClientMCP json.RawMessage `json:"clientMcp,omitempty"`
}

// Store errors.
var (
	// ErrFenced is a write the store refused because another writer appended to the log since the fence.
	ErrFenced   = errors.New("store: a frame landed after the fence")
	ErrRevision = errors.New("store: directory entry changed (revision mismatch)")
	// ErrNotFound is a directory without the session's entry; the session core's ErrNotFound is this value.
	ErrNotFound = errors.New("session not found")
)

// UndecodableEntries is a directory List that left out entries it could not decode (a damaged store, or an
// entry another version wrote); the entries returned with it are the others.
type UndecodableEntries struct {
	Keys []string
}

func (e *UndecodableEntries) Error() string {
	return fmt.Sprintf("store: %d directory entries do not decode: %s", len(e.Keys), strings.Join(e.Keys, ", "))
}
