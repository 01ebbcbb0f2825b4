package services

import (
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// File listing (GET /v1/sessions/{id}/files): the files a person may mention in a prompt, from the session's
// cwd and additionalDirectories, confined as fs/* is (agentsvc/list.go). The session checks who may list.

// Bounds of one listing.
const (
	DefaultFileLimit = 50
	MaxFileLimit     = 200
	MaxFileQuery     = 256
	maxFilesScanned  = 20000
	maxFilesDepth    = 16
)

// FilesOptions is one listing: the substring to look for ("" = all) and how many to return (0 = the default).
type FilesOptions struct {
	Query string `json:"q,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// Check refuses a query or a limit out of bounds with ErrBadRequest, and sets the default limit.
func (o *FilesOptions) Check() error {
	if len(o.Query) > MaxFileQuery || !utf8.ValidString(o.Query) {
		return fmt.Errorf("%w: q must be valid UTF-8 of at most %d bytes", sessionerr.ErrBadRequest, MaxFileQuery)
	}
	if o.Limit == 0 {
		o.Limit = DefaultFileLimit
	}
	if o.Limit < 1 || o.Limit > MaxFileLimit {
		return fmt.Errorf("%w: limit must be between 1 and %d", sessionerr.ErrBadRequest, MaxFileLimit)
	}
	return nil
}

// ListFiles lists the files of the session this node runs.
func (sv *Services) ListFiles(opts FilesOptions) (agentsvc.ListResult, error) {
	res, err := sv.listFilesOnce(opts)
	if errors.Is(err, agentsvc.ErrRootUnreadable) {
		res, err = sv.listFilesOnce(opts) // a re-attach replaced the cwd's root meanwhile: list the new one
	}
	if errors.Is(err, agentsvc.ErrRootUnreadable) {
		err = fmt.Errorf("%w: %v", sessionerr.ErrForbiddenCwd, err)
	}
	return res, err
}

// listFilesOnce lists the session's roots: the cwd's open root (or, for a restored session not re-attached
// yet, its stored cwd checked against today's roots) and each additional directory, checked the same way.
func (sv *Services) listFilesOnce(opts FilesOptions) (agentsvc.ListResult, error) {
	cwd, closed := sv.workspace.RootForList()
	if closed {
		return agentsvc.ListResult{}, sessionerr.ErrClosed
	}
	var opened []*os.Root
	defer func() {
		for _, o := range opened {
			_ = o.Close()
		}
	}()
	if cwd == nil {
		root, err := sv.s.Reconfine(sv.cwd)
		if err != nil {
			return agentsvc.ListResult{}, err
		}
		opened = append(opened, root)
		cwd = root
	}
	roots := []agentsvc.ListRoot{{Root: cwd, Base: sv.cwd}}
	for _, d := range sv.moreDirs {
		root, err := sv.s.Reconfine(d)
		if err != nil {
			return agentsvc.ListResult{}, err
		}
		opened = append(opened, root)
		roots = append(roots, agentsvc.ListRoot{Root: root, Base: d})
	}
	res, err := agentsvc.SearchFiles(roots, opts.Query, agentsvc.ListBounds{MaxScan: maxFilesScanned, MaxDepth: maxFilesDepth, Limit: opts.Limit})
	if _, closed := sv.workspace.RootForList(); err != nil && closed {
		return agentsvc.ListResult{}, sessionerr.ErrClosed
	}
	return res, err
}
