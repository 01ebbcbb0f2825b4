package jsstore

import (
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store/jsstore/storedlog"
)

// Headers of a JetStream atomic batch (nats-server 2.12+, streams with AllowAtomicPublish): the store keeps
// every message of a batch or none, and checks the expected-sequence header of its first message once for all.
const (
	hdrBatchID     = "Nats-Batch-Id"       // at most 64 characters, unique among the stream's open batches
	hdrBatchSeq    = "Nats-Batch-Sequence" // 1-based, without gaps
	hdrBatchCommit = "Nats-Batch-Commit"   // "1" on the last message: the only one that is acknowledged
)

// Bounds of one atomic batch: the server refuses more messages than its max_batch_size (1000 by default; a
// server set lower refuses the batch and the writer halves its batches until the server takes them), and the
// whole batch is one replication proposal, so its bytes stay small too. A writer that has fallen behind
// (an agent writing faster than a quorum's round trip) catches up by that many frames per round trip.
const (
	atomicBatchMsgs  = 1000
	atomicBatchBytes = 1 << 20
)

// batchHeaderBytes bounds what publishBatch adds to a message's headers: the batch's id and the message's
// place in it (the first message's expected sequence and the last one's commit are counted in this too).
const batchHeaderBytes = 128

// headerBytes is the size of h as NATS sends it ("NATS/1.0\r\n", a "Key: value\r\n" line per value, a blank
// line).
func headerBytes(h nats.Header) int {
	n := len("NATS/1.0\r\n\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	return n
}

// batching reports whether this writer stores its frames in atomic batches: fenced, on a stream that allows
// them, until the stream refused one as disabled.
func (w *writer) batching() bool {
	return w.p.st.opts.Fence && w.p.st.atomicBatches && !w.noBatches
}

// publishBatches publishes entries as atomic batches of whole single-message frames, each expecting the
// subject's last sequence; a frame stored in parts goes alone, one message at a time.
func (w *writer) publishBatches(entries []eventlog.Entry) error {
	p := w.p
	var batch []*nats.Msg
	var bytes int
	end := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := w.publishBatch(batch, w.pos)
		batch, bytes = batch[:0], 0
		return err
	}
	for _, e := range entries {
		if len(e.Frame) > p.partSize {
			if err := end(); err != nil {
				return err
			}
			if err := w.publishFrame(e); err != nil {
				return err
			}
			continue
		}
		m := storedlog.FrameMsgs(p.subject, p.epoch, e.Seq, e.Frame, p.partSize)[0]
		size := len(m.Data) + headerBytes(m.Header) + batchHeaderBytes
		if len(batch) == w.batchMsgs() || (len(batch) > 0 && bytes+size > atomicBatchBytes) {
			if err := end(); err != nil {
				return err
			}
		}
		batch = append(batch, m)
		bytes += size
		w.pos = e.Seq
	}
	return end()
}

// publishBatch sends msgs, the frames up to seq, as one atomic batch once the publish before it is
// acknowledged: the first message carries the expected last sequence, the last one the commit and the
// only reply. A batch of one is a plain publish.
func (w *writer) publishBatch(msgs []*nats.Msg, seq uint64) error {
	if len(msgs) == 1 {
		return w.publish(msgs[0], seq, true)
	}
	for len(w.queue) > 0 {
		if err := w.awaitOldest(nil); err != nil {
			return err
		}
	}
	id := nuid.Next()
	sizes := make([]int, len(msgs))
	msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(w.last, 10))
	for i, m := range msgs {
		m.Header.Set(hdrBatchID, id)
		m.Header.Set(hdrBatchSeq, strconv.Itoa(i+1))
		sizes[i] = len(m.Data)
	}
	commit := msgs[len(msgs)-1]
	commit.Header.Set(hdrBatchCommit, "1")
	for _, m := range msgs[:len(msgs)-1] {
		if err := w.p.st.nc.PublishMsg(m); err != nil { // no reply: the commit's ack answers for the batch
			return err
		}
	}
	fut, err := w.p.st.js.PublishMsgAsync(commit)
	if err != nil {
		return err
	}
	now := time.Now()
	w.p.oldestSent.Store(now.UnixNano())
	w.queue = append(w.queue, inflight{fut: fut, seq: seq, last: true, sent: now, sizes: sizes})
	return nil
}

// isBatchDuplicate is a batch refused because one of its messages is stored already (its ack was lost):
// resync finds how far the log got.
func isBatchDuplicate(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == errCodeAtomicPublishContainsDuplicate ||
		apiErr.ErrorCode == errCodeDuplicateMessageConflict)
}

// batchMsgs is how many frames this writer puts in one batch at most.
func (w *writer) batchMsgs() int {
	if w.maxBatch > 0 {
		return w.maxBatch
	}
	return atomicBatchMsgs
}

// isBatchDisabled is a batch refused because the stream no longer allows atomic batches.
func isBatchDisabled(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeAtomicPublishDisabled
}

// isBatchTooLarge is a batch refused because the server was configured with a smaller max_batch_size.
func isBatchTooLarge(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeAtomicPublishTooLarge
}

// nats-server's error codes for atomic batches, which nats.go does not name.
const (
	errCodeAtomicPublishDisabled          jetstream.ErrorCode = 10174
	errCodeAtomicPublishTooLarge          jetstream.ErrorCode = 10199
	errCodeAtomicPublishContainsDuplicate jetstream.ErrorCode = 10201
	errCodeDuplicateMessageConflict       jetstream.ErrorCode = 10158 // a duplicate staged, not yet stored
)
