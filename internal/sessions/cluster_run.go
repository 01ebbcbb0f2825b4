package sessions

import (
	"context"
	"errors"
)

// runCluster: see RunCluster.
func (r *Registry) runCluster(ctx context.Context) error {
	return errors.New("cluster mode is not wired yet")
}
