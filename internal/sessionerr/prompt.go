package sessionerr

import (
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/principal"
)

// ErrPromptTooLarge is a prompt whose content blocks exceed the session core's MaxPromptBytes. Every face gets
// it from the one check in PromptContext, so REST, /ws and both /acp transports refuse the same prompts.
var ErrPromptTooLarge = errors.New("prompt too large")

// MaxIdempotencyKeyLen bounds an idempotency key (bytes of printable ASCII).
const MaxIdempotencyKeyLen = 255

// ErrIdempotencyKeyReused is a key that started a turn for another prompt (REST 422 idempotency_key_reused).
var ErrIdempotencyKeyReused = errors.New("the idempotency key was used for another prompt in this session")

// TurnRunningError is ErrTurnRunning naming the running turn and who started it, so a client can join it.
// TurnID is "" while the prompt that re-attaches a detached session has not started its turn yet.
type TurnRunningError struct {
	TurnID    string
	StartedBy *principal.Ref
}

func (e *TurnRunningError) Error() string {
	if e.TurnID == "" {
		return ErrTurnRunning.Error()
	}
	return ErrTurnRunning.Error() + ": turn " + e.TurnID
}
func (e *TurnRunningError) Unwrap() error { return ErrTurnRunning }

// CheckIdempotencyKey says whether key can be an idempotency key: 1 to MaxIdempotencyKeyLen bytes of
// printable ASCII (space to tilde).
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return fmt.Errorf("%w: an idempotency key has 1 to %d characters", ErrBadRequest, MaxIdempotencyKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return fmt.Errorf("%w: an idempotency key is printable ASCII", ErrBadRequest)
		}
	}
	return nil
}
