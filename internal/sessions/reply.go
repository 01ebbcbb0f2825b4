package sessions

import (
	"context"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
)

// call routes cmd to node and returns an error the owner replied with as ReplyErr makes it, with the reply.
func (r *Registry) call(ctx context.Context, node string, cmd store.Command) (store.Reply, error) {
	rep, err := r.cfg.Cluster.Call(ctx, node, cmd)
	if err == nil {
		err = sessionerr.ReplyErr(rep.Error)
	}
	return rep, err
}
