package jsstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// lagKV is the nodes bucket as a replica behind the stream's leader shows it: once lag is set, Create reports
// the key as existing although it was deleted (Create reads the key back, and that read may still see the last
// beat).
type lagKV struct {
	jetstream.KeyValue
	lag     atomic.Bool
	creates chan struct{} // one send per Create that reached the bucket
}

func (k *lagKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if k.lag.Load() {
		return 0, jetstream.ErrKeyExists
	}
	rev, err := k.KeyValue.Create(ctx, key, value, opts...)
	select {
	case k.creates <- struct{}{}:
	default:
	}
	return rev, err
}

// TestClaimAfterADeleteSeenLate: the holder's key is deleted while a new process waits for it, but Create still
// sees the old value. The claim builds on the delete's revision instead of waiting out the TTL and failing
// with "node id in use" (a fast-restart drill restarted a node that way and the node exited).
func TestClaimAfterADeleteSeenLate(t *testing.T) {
	srv := natstest.Embedded(t)
	nc := srv.Connect()
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := jsstore.Open(ctx, nc, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := st.NodesBucket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "a", []byte(`{"id":"a","incarnation":"old"}`)); err != nil {
		t.Fatal(err)
	}
	lk := &lagKV{KeyValue: kv, creates: make(chan struct{}, 8)}
	type result struct {
		rev uint64
		err error
	}
	done := make(chan result, 1)
	go func() {
		rev, err := st.ClaimThrough(ctx, lk, "a")
		done <- result{rev, err}
	}()
	// The first Create finds the key; the second comes after the watch's initial pass.
	for i := 0; i < 2; i++ {
		select {
		case <-lk.creates:
		case r := <-done:
			t.Fatalf("claim ended before the holder left: %d %v", r.rev, r.err)
		}
	}
	lk.lag.Store(true)
	if err := kv.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("claim after the holder's key was deleted: %v", r.err)
	}
	e, err := kv.Get(ctx, "a")
	if err != nil || string(e.Value()) == `{"id":"a","incarnation":"old"}` || e.Revision() != r.rev {
		t.Fatalf("the key after the claim: %v %v (claimed revision %d)", e, err, r.rev)
	}
}
