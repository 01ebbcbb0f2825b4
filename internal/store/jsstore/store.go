package jsstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// Bounds on the node's one JetStream context (docs/cluster.md §1): publishes in flight across every session,
// and how long an ack may take before the writer treats the publish as failed and republishes.
const (
	maxPendingPublishes = 4096
	publishAckTimeout   = 10 * time.Second
	duplicateWindow     = 2 * time.Minute
)

// Store is a store.Store on JetStream: stream P-log holds every session's frames on subject P.log.<sid>,
// bucket P-sessions the directory.
type Store struct {
	opts   Options             // Static after construction.
	nc     *nats.Conn          // Static after construction; owned by the caller.
	js     jetstream.JetStream // Static after construction.
	stream jetstream.Stream    // Static after construction.
	dir    *directory          // Static after construction.
	// atomicBatches is whether the log stream allows atomic batch publish: a server before 2.12 drops the
	// setting, and a fenced writer then publishes one message at a time. Static after construction.
	atomicBatches bool
	// feedStalls counts feeds that failed with ErrFeedStalled: a pull nobody answered, found by a timer.
	feedStalls atomic.Uint64
}

// FeedStalls is how many feeds failed with ErrFeedStalled (gateway_store_feed_stalls_total).
func (s *Store) FeedStalls() uint64 { return s.feedStalls.Load() }

var _ store.Store = (*Store)(nil)

// Open creates or updates the log stream and the directory bucket. The caller keeps nc and closes it after
// stopping every persister.
func Open(ctx context.Context, nc *nats.Conn, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(maxPendingPublishes),
		jetstream.WithPublishAsyncTimeout(publishAckTimeout))
	if err != nil {
		return nil, fmt.Errorf("jsstore: %w", err)
	}
	maxPerSubject := int64(-1)
	if opts.LogMaxFrames > 0 {
		maxPerSubject = int64(opts.LogMaxFrames)
	}
	stream, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:              opts.logStream(),
		Subjects:          []string{opts.logSubject("*")},
		Storage:           jetstream.FileStorage,
		Replicas:          opts.Replicas,
		Retention:         jetstream.LimitsPolicy,
		Discard:           jetstream.DiscardOld,
		MaxMsgsPerSubject: maxPerSubject,
		Duplicates:        duplicateWindow,
		AllowDirect:       true,
		// Fenced writers store a ring read as one batch (docs/cluster.md §5); set on a stream an older
		// gateway created too, by the update.
		AllowAtomicPublish: true,
	})
	if err != nil {
		return nil, fmt.Errorf("jsstore: stream %s: %w", opts.logStream(), err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   opts.dirBucket(),
		History:  1,
		Storage:  jetstream.FileStorage,
		Replicas: opts.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("jsstore: bucket %s: %w", opts.dirBucket(), err)
	}
	return &Store{opts: opts, nc: nc, js: js, stream: stream, dir: &directory{kv: kv, js: js, nc: nc, bucket: opts.dirBucket()},
		atomicBatches: stream.CachedInfo().Config.AllowAtomicPublish}, nil
}

// Dir is the KV-backed session directory.
func (s *Store) Dir() store.Directory { return s.dir }

// Remove purges the session's log subject, then deletes its directory entry.
func (s *Store) Remove(ctx context.Context, sid string) error {
	if err := checkSID(sid); err != nil {
		return err
	}
	if err := s.stream.Purge(ctx, jetstream.WithPurgeSubject(s.opts.logSubject(sid))); err != nil {
		return fmt.Errorf("jsstore: purge %s: %w", sid, err)
	}
	if err := s.dir.Delete(ctx, sid); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}
