package jsstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore/storedlog"
)

// Fork implements store.Store: it appends frames (normally a new epoch starting at the durable head + 1)
// as the single writer of a session the caller just claimed. The first message expects fence as the subject's
// last stream sequence, so a frame that landed after the caller's Feed fails it with ErrFenced; once the first
// message is stored, readers retire the old epoch and late frames of it are dropped, so the rest need no fence.
func (s *Store) Fork(ctx context.Context, sid string, fence uint64, frames []store.StoredFrame) error {
	if err := checkSID(sid); err != nil {
		return err
	}
	subject := s.opts.logSubject(sid)
	partSize := max(1, int(s.nc.MaxPayload())-storedlog.PartOverhead)
	first := true
	for _, fr := range frames {
		var msgs []*nats.Msg
		if fr.GapTo > 0 {
			msgs = []*nats.Msg{storedlog.GapMsg(subject, fr.Epoch, fr.Seq, fr.GapTo)}
		} else {
			msgs = storedlog.FrameMsgs(subject, fr.Epoch, fr.Seq, fr.Frame, partSize)
		}
		for _, m := range msgs {
			var opts []jetstream.PublishOpt
			if first {
				opts = append(opts, jetstream.WithExpectLastSequencePerSubject(fence))
			}
			_, err := s.js.PublishMsg(ctx, m, opts...)
			if first && isWrongLastSequence(err) {
				return store.ErrFenced
			}
			if err != nil {
				return fmt.Errorf("jsstore: fork %s: %w", sid, err)
			}
			first = false
		}
	}
	return nil
}

// isWrongLastSequence reports the server refusing an expected-last-sequence publish (10164 on replicated
// streams).
func isWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
