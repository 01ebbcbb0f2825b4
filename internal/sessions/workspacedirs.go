package sessions

import (
	"errors"
	"fmt"

	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// WorkspaceDirs lists the directories under path, which must lie inside a workspace root ("" = the roots):
// agentsvc.ListDirs, its refusals as ErrForbiddenCwd (outside the roots) or ErrBadRequest.
func (r *Registry) WorkspaceDirs(path string) (agentsvc.DirList, error) {
	res, err := agentsvc.ListDirs(r.cfg.WorkspaceRoots, r.cfg.Workdir, path)
	var de *agentsvc.DirError
	switch {
	case errors.As(err, &de) && de.Outside:
		return res, fmt.Errorf("%w: %w", sessionerr.ErrForbiddenCwd, err)
	case err != nil:
		return res, fmt.Errorf("%w: %w", sessionerr.ErrBadRequest, err)
	}
	return res, nil
}
