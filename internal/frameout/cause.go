package frameout

import (
	"context"
	"errors"
)

// CloseCause returns the *CloseError ctx was cancelled with, else err: a socket whose request the gateway
// ended for a reason it names (credentials revoked) closes with that code rather than dropping the
// connection.
func CloseCause(ctx context.Context, err error) error {
	var ce *CloseError
	if errors.As(context.Cause(ctx), &ce) {
		return ce
	}
	return err
}
