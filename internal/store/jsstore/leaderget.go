package jsstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// leaderGet reads a key's last value from its bucket's stream leader ($JS.API.STREAM.MSG.GET), not with a
// direct get as KeyValue.Get does: a direct get may be answered by a replica that has not applied the last
// write yet (NATS promises no read-after-write for it), and what is read here feeds a compare-and-swap (a
// claim, a redemption) or answers a ticket minted a moment ago on another node. A deleted, purged or expired
// key is jetstream.ErrKeyNotFound, as from KeyValue.Get.
func leaderGet(ctx context.Context, nc *nats.Conn, bucket, key string) (value []byte, rev uint64, err error) {
	req, _ := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{"$KV." + bucket + "." + key})
	msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, req)
	if err != nil {
		return nil, 0, err
	}
	var resp struct {
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		Message *struct {
			Seq    uint64 `json:"seq"`
			Header []byte `json:"hdrs"`
			Data   []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, 0, fmt.Errorf("message get %s: %w", key, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return nil, 0, jetstream.ErrKeyNotFound
	case resp.Error != nil:
		return nil, 0, fmt.Errorf("message get %s: %s (%d)", key, resp.Error.Description, resp.Error.ErrCode)
	case resp.Message == nil:
		return nil, 0, fmt.Errorf("message get %s: %w", key, jetstream.ErrInvalidJetStreamResponse)
	}
	if len(resp.Message.Header) > 0 {
		h, err := nats.DecodeHeadersMsg(resp.Message.Header)
		if err != nil {
			return nil, 0, fmt.Errorf("message get %s: %w", key, err)
		}
		if op := h.Get("KV-Operation"); op == "DEL" || op == "PURGE" || h.Get(jetstream.MarkerReasonHeader) != "" {
			return nil, 0, jetstream.ErrKeyNotFound // a delete, a purge, or a TTL's marker
		}
	}
	return resp.Message.Data, resp.Message.Seq, nil
}
