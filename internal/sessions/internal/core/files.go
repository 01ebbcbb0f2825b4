package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/agentsvc"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
)

// File listing (GET /v1/sessions/{id}/files): the files a person may mention in a prompt, from the session's
// cwd and additionalDirectories, confined as fs/* is (agentsvc/list.go). Only those who may prompt may list:
// a viewer watches the transcript, not the working directory.

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

func (o *FilesOptions) check() error {
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

// ListFilesAs lists the session's files matching opts for who (a collaborator at least).
func (s *Session) ListFilesAs(ctx context.Context, who principal.Principal, opts FilesOptions) (agentsvc.ListResult, error) {
	if err := opts.check(); err != nil {
		return agentsvc.ListResult{}, err
	}
	if err := s.allow(who, AccessAct); err != nil {
		return agentsvc.ListResult{}, err
	}
	if s.Status() == store.StatusClosed {
		return agentsvc.ListResult{}, sessionerr.ErrClosed
	}
	return s.run.ListFiles(ctx, who, opts)
}

// listFilesHere lists the files of the session this node runs.
func (s *Session) listFilesHere(opts FilesOptions) (agentsvc.ListResult, error) {
	res, err := s.listFilesOnce(opts)
	if errors.Is(err, agentsvc.ErrRootUnreadable) {
		res, err = s.listFilesOnce(opts) // a re-attach replaced the cwd's root meanwhile: list the new one
	}
	if errors.Is(err, agentsvc.ErrRootUnreadable) {
		err = fmt.Errorf("%w: %v", sessionerr.ErrForbiddenCwd, err)
	}
	return res, err
}

// listFilesOnce lists the session's roots: the cwd's open root (or, for a restored session not re-attached
// yet, its stored cwd checked against today's roots) and each additional directory, checked the same way.
func (s *Session) listFilesOnce(opts FilesOptions) (agentsvc.ListResult, error) {
	cwd, closed := s.workspace.RootForList()
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
		root, err := s.host.Reconfine(s.Cwd)
		if err != nil {
			return agentsvc.ListResult{}, err
		}
		opened = append(opened, root)
		cwd = root
	}
	roots := []agentsvc.ListRoot{{Root: cwd, Base: s.Cwd}}
	for _, d := range s.AdditionalDirs {
		root, err := s.host.Reconfine(d)
		if err != nil {
			return agentsvc.ListResult{}, err
		}
		opened = append(opened, root)
		roots = append(roots, agentsvc.ListRoot{Root: root, Base: d})
	}
	res, err := agentsvc.SearchFiles(roots, opts.Query, agentsvc.ListBounds{MaxScan: maxFilesScanned, MaxDepth: maxFilesDepth, Limit: opts.Limit})
	if _, closed := s.workspace.RootForList(); err != nil && closed {
		return agentsvc.ListResult{}, sessionerr.ErrClosed
	}
	return res, err
}
