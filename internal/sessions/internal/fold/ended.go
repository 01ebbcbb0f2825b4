package fold

import (
	"fmt"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
)

// Ended is why a session whose frames folded into st takes no more requests because it ended: ErrFailed
// with the reason, or ErrClosed; nil while it has not ended.
func (st *State) Ended() error {
	switch st.Status {
	case store.StatusFailed:
		return fmt.Errorf("%w: %s", sessionerr.ErrFailed, st.Reason)
	case store.StatusClosed:
		return sessionerr.ErrClosed
	}
	return nil
}
