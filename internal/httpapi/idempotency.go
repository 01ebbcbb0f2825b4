package httpapi

import (
	"net/http"

	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// idempotencyKey is the prompt's Idempotency-Key header ("" when absent): with it, sending the same prompt
// again is the turn the first one started, never a second turn. A key that is empty, too long or not
// printable ASCII is 400 invalid_idempotency_key.
func idempotencyKey(r *http.Request) (string, error) {
	vals := r.Header.Values("Idempotency-Key")
	switch {
	case len(vals) == 0:
		return "", nil
	case len(vals) > 1:
		return "", problem(http.StatusBadRequest, "invalid_idempotency_key", "send one Idempotency-Key header")
	}
	if err := sessionerr.CheckIdempotencyKey(vals[0]); err != nil {
		return "", problem(http.StatusBadRequest, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 characters of printable ASCII")
	}
	return vals[0], nil
}
