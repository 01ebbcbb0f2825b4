package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// List returns every current entry and its revision. An entry that does not parse is skipped, as Watch does.
//
// A watch alone is not a complete list: it ends when the server's pending count says it has caught up, and
// an entry rewritten during the list (History 1 drops its old value) can be counted before its new value
// arrives. So the keys the stream holds are read after the watch, and any the watch missed is read alone.
func (d *directory) List(ctx context.Context) ([]store.DirEntry, []uint64, error) {
	latest, order, err := d.watchCurrent(ctx)
	if err != nil {
		return nil, nil, err
	}
	keys, err := d.storedKeys(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range keys {
		if _, ok := latest[k]; ok {
			continue
		}
		kve, err := leaderGet(ctx, d.nc, d.bucket, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted: the subject keeps its delete marker
		}
		if err != nil {
			return nil, nil, fmt.Errorf("jsstore: directory list: %w", err)
		}
		latest[k] = kve
		order = append(order, k)
	}
	var out []store.DirEntry
	var revs []uint64
	var undecodable []string
	for _, k := range order {
		kve := latest[k]
		var e store.DirEntry
		if json.Unmarshal(kve.Value(), &e) != nil {
			undecodable = append(undecodable, k)
			continue
		}
		out, revs = append(out, e), append(revs, kve.Revision())
	}
	if len(undecodable) > 0 {
		return out, revs, &store.UndecodableEntries{Keys: undecodable}
	}
	return out, revs, nil
}

// watchCurrent reads a watch of the bucket up to its end-of-current-values marker, keeping each key's latest
// value (a key rewritten during the read can arrive twice) and the order keys first arrived in.
func (d *directory) watchCurrent(ctx context.Context) (map[string]jetstream.KeyValueEntry, []string, error) {
	w, err := d.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, nil, fmt.Errorf("jsstore: directory list: %w", err)
	}
	defer func() { _ = w.Stop() }()
	latest := map[string]jetstream.KeyValueEntry{}
	var order []string
	for {
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("jsstore: directory list: %w", ctx.Err())
		case kve, ok := <-w.Updates():
			if !ok || kve == nil { // nil marks the end of the current values
				return latest, order, nil
			}
			if _, ok := latest[kve.Key()]; !ok {
				order = append(order, kve.Key())
			}
			latest[kve.Key()] = kve
		}
	}
}

// storedKeys lists the keys the bucket's stream holds a message for, deleted ones included, as its leader
// answers a stream info with a subject filter.
func (d *directory) storedKeys(ctx context.Context) ([]string, error) {
	st, err := d.js.Stream(ctx, "KV_"+d.bucket)
	if err != nil {
		return nil, fmt.Errorf("jsstore: directory list: %w", err)
	}
	prefix := "$KV." + d.bucket + "."
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(prefix+">"))
	if err != nil {
		return nil, fmt.Errorf("jsstore: directory list: %w", err)
	}
	keys := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		keys = append(keys, strings.TrimPrefix(subj, prefix))
	}
	return keys, nil
}
