package turns

import (
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// A prompt sent with an idempotency key starts at most one turn: the session remembers its recent keys with
// the turn each started, and the same key with the same prompt is that turn again, whichever node it reaches
// and however often. The key is logged (as a digest) in the turn's `_gateway/turn_started` frame, so the
// owner, every follower copy and a restarted owner fold the same keys from the same frames.

// MaxPromptKeys is how many keyed prompts a session remembers; the oldest is forgotten first.
const MaxPromptKeys = 64

// keyedTurn is the turn a key started and, once it ended, how (without its text).
type keyedTurn struct {
	key    promptkey.Key
	turnID string
	result *TurnResult
}

// Keys is a session's recent keyed prompts, oldest first. The session guards it with its lock.
type Keys []keyedTurn

// find is the record of key, or nil.
func (ks Keys) find(key string) *keyedTurn {
	for i := range ks {
		if ks[i].key.Key == key {
			return &ks[i]
		}
	}
	return nil
}

// Add remembers that k started turnID, forgetting the oldest record past MaxPromptKeys.
func (ks *Keys) Add(k promptkey.Key, turnID string) {
	if k.Key == "" || ks.find(k.Key) != nil {
		return
	}
	if len(*ks) >= MaxPromptKeys {
		*ks = append((*ks)[:0], (*ks)[1:]...)
	}
	*ks = append(*ks, keyedTurn{key: k, turnID: turnID})
}

// Ended records how a keyed turn ended, for a retry that comes once later turns replaced it as the latest.
func (ks Keys) Ended(r TurnResult) {
	for i := range ks {
		if ks[i].turnID == r.TurnID {
			r.Text, r.Truncated = "", false // the log has it; a record holds no text
			ks[i].result = &r
			return
		}
	}
}

// Turn is the turn k already started, or nil when k is new: held is the session's running or latest turn
// of an id, else nil. A known key with another prompt is ErrIdempotencyKeyReused. A turn the session no
// longer holds comes back ended, without its text.
func (ks Keys) Turn(k promptkey.Key, held func(id string) *Turn) (*Turn, error) {
	if k.Key == "" {
		return nil, nil
	}
	rec := ks.find(k.Key)
	if rec == nil {
		return nil, nil
	}
	if rec.key.Prompt != k.Prompt {
		return nil, sessionerr.ErrIdempotencyKeyReused
	}
	if t := held(rec.turnID); t != nil {
		return t, nil
	}
	r := TurnResult{TurnID: rec.turnID}
	if rec.result != nil {
		r = *rec.result
	}
	return Ended(r), nil
}

// RunningError is the error for a prompt while t runs (nil t: a re-attach is starting it).
func RunningError(t *Turn) error {
	if t == nil {
		return &sessionerr.TurnRunningError{}
	}
	return &sessionerr.TurnRunningError{TurnID: t.ID, StartedBy: t.startedBy}
}
