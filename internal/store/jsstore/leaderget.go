package jsstore

import (
	"context"
	"encoding/json"
	"errors"
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
	m, err := leaderLast(ctx, nc, "KV_"+bucket, "$KV."+bucket+"."+key)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, jetstream.ErrKeyNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("message get %s: %w", key, err)
	}
	if op := m.header.Get("KV-Operation"); op == "DEL" || op == "PURGE" || m.header.Get(jetstream.MarkerReasonHeader) != "" {
		return nil, jetstream.ErrKeyNotFound // a delete, a purge, or a TTL's marker
	}
	return leaderEntry{bucket: bucket, key: key, value: m.data, rev: m.seq, created: m.time}, nil
}

// lastMsg is a stream's last message on a subject as its leader holds it.
type lastMsg struct {
	seq    uint64
	header nats.Header
	data   []byte
	time   time.Time
}

// leaderLast reads the last message of subject in stream from the stream's leader; none is
// jetstream.ErrMsgNotFound.
func leaderLast(ctx context.Context, nc *nats.Conn, stream, subject string) (lastMsg, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, leaderGetTimeout)
		defer cancel()
	}
	req, _ := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{subject})
	msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return lastMsg{}, err
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
		return lastMsg{}, err
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return lastMsg{}, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return lastMsg{}, fmt.Errorf("%s (%d)", resp.Error.Description, resp.Error.ErrCode)
	case resp.Message == nil:
		return lastMsg{}, jetstream.ErrInvalidJetStreamResponse
	}
	m := lastMsg{seq: resp.Message.Seq, data: resp.Message.Data, time: resp.Message.Time, header: nats.Header{}}
	if len(resp.Message.Header) > 0 {
		if m.header, err = nats.DecodeHeadersMsg(resp.Message.Header); err != nil {
			return lastMsg{}, err
		}
	}
	return m, nil
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
