package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// directory is store.Directory on a KV bucket: key = session id, value = DirEntry JSON, revision = the
// key's last stream sequence, so Update with the revision read is the compare-and-swap every claim relies on.
type directory struct {
	// Static after construction.
	kv     jetstream.KeyValue
	js     jetstream.JetStream
	nc     *nats.Conn
	bucket string
}

// Get reads from the bucket's stream leader (leaderGet): the revision it returns is what claims compare
// against.
func (d *directory) Get(ctx context.Context, sid string) (store.DirEntry, uint64, error) {
	if err := checkSID(sid); err != nil {
		return store.DirEntry{}, 0, err
	}
	kve, err := leaderGet(ctx, d.nc, d.bucket, sid)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return store.DirEntry{}, 0, store.ErrNotFound
	}
	if err != nil {
		return store.DirEntry{}, 0, fmt.Errorf("jsstore: directory get %s: %w", sid, err)
	}
	var e store.DirEntry
	if err := json.Unmarshal(kve.Value(), &e); err != nil {
		return store.DirEntry{}, 0, fmt.Errorf("jsstore: directory entry %s: %w", sid, err)
	}
	return e, kve.Revision(), nil
}

// Create stores a new entry; ErrRevision when the key exists.
func (d *directory) Create(ctx context.Context, e store.DirEntry) (uint64, error) {
	if err := checkSID(e.ID); err != nil {
		return 0, err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return 0, err
	}
	rev, err := d.kv.Create(ctx, e.ID, b)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, store.ErrRevision
	}
	if err != nil {
		return 0, fmt.Errorf("jsstore: directory create %s: %w", e.ID, err)
	}
	return rev, nil
}

// Update replaces the entry if its revision is still rev; ErrRevision when another writer won.
func (d *directory) Update(ctx context.Context, e store.DirEntry, rev uint64) (uint64, error) {
	if err := checkSID(e.ID); err != nil {
		return 0, err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return 0, err
	}
	next, err := d.kv.Update(ctx, e.ID, b, rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, store.ErrRevision
	}
	if err != nil {
		return 0, fmt.Errorf("jsstore: directory update %s: %w", e.ID, err)
	}
	return next, nil
}

func (d *directory) Delete(ctx context.Context, sid string) error {
	if err := checkSID(sid); err != nil {
		return err
	}
	if err := d.kv.Delete(ctx, sid); err != nil {
		return fmt.Errorf("jsstore: directory delete %s: %w", sid, err)
	}
	return nil
}

// Watch calls fn for every current entry, then for each change, until ctx ends (then it returns nil). An entry
// that does not parse is skipped here, so one bad key cannot hide the others; Get reports it.
func (d *directory) Watch(ctx context.Context, fn func(e store.DirEntry, rev uint64, deleted bool)) error {
	w, err := d.kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("jsstore: directory watch: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case kve, ok := <-w.Updates():
			if !ok {
				return nil
			}
			if kve == nil {
				continue // the end of the current entries
			}
			if op := kve.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
				fn(store.DirEntry{ID: kve.Key()}, kve.Revision(), true)
				continue
			}
			var e store.DirEntry
			if json.Unmarshal(kve.Value(), &e) != nil {
				continue
			}
			fn(e, kve.Revision(), false)
		}
	}
}
