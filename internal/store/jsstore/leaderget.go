package jsstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// leaderGet reads a key's last value from its bucket's stream leader ($JS.API.STREAM.MSG.GET), not with a
// direct get as KeyValue.Get does: a direct get may be answered by a replica that has not applied the last
// write yet (NATS promises no read-after-write for it), and what is read here feeds a compare-and-swap (a
// claim, a redemption, a beat) or must find what another server wrote a moment ago. Only the leader answers,
// so during an election the read waits (up to leaderGetTimeout when ctx has no deadline). A deleted, purged
// or expired key is jetstream.ErrKeyNotFound, as from KeyValue.Get.
func leaderGet(ctx context.Context, nc *nats.Conn, bucket, key string) (jetstream.KeyValueEntry, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, leaderGetTimeout)
		defer cancel()
	}
	req, _ := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{"$KV." + bucket + "." + key})
	msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, req)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Error *struct {
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		Message *struct {
			Seq    uint64    `json:"seq"`
			Header []byte    `json:"hdrs"`
			Data   []byte    `json:"data"`
			Time   time.Time `json:"time"`
		} `json:"message"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, fmt.Errorf("message get %s: %w", key, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return nil, jetstream.ErrKeyNotFound
	case resp.Error != nil:
		return nil, fmt.Errorf("message get %s: %s (%d)", key, resp.Error.Description, resp.Error.ErrCode)
	case resp.Message == nil:
		return nil, fmt.Errorf("message get %s: %w", key, jetstream.ErrInvalidJetStreamResponse)
	}
	if len(resp.Message.Header) > 0 {
		h, err := nats.DecodeHeadersMsg(resp.Message.Header)
		if err != nil {
			return nil, fmt.Errorf("message get %s: %w", key, err)
		}
		if op := h.Get("KV-Operation"); op == "DEL" || op == "PURGE" || h.Get(jetstream.MarkerReasonHeader) != "" {
			return nil, jetstream.ErrKeyNotFound // a delete, a purge, or a TTL's marker
		}
	}
	m := resp.Message
	return leaderEntry{bucket: bucket, key: key, value: m.Data, rev: m.Seq, created: m.Time}, nil
}

// leaderGetTimeout bounds a leader read whose context has none, as jetstream's own API requests are.
const leaderGetTimeout = 5 * time.Second

// leaderEntry is a jetstream.KeyValueEntry read by leaderGet: always a put.
type leaderEntry struct {
	bucket, key string
	value       []byte
	rev         uint64
	created     time.Time
}

func (e leaderEntry) Bucket() string                  { return e.bucket }
func (e leaderEntry) Key() string                     { return e.key }
func (e leaderEntry) Value() []byte                   { return e.value }
func (e leaderEntry) Revision() uint64                { return e.rev }
func (e leaderEntry) Created() time.Time              { return e.created }
func (e leaderEntry) Delta() uint64                   { return 0 }
func (e leaderEntry) Operation() jetstream.KeyValueOp { return jetstream.KeyValuePut }
