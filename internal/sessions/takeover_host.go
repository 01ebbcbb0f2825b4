package sessions

import (
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/durable"
	"github.com/acp-gateway/gateway/internal/sessions/internal/takeover"
	"github.com/acp-gateway/gateway/internal/store"
)

// takeoverHost is the registry as the Host of its takeover (package takeover): a type of its own, so that
// what the takeover asks stays off the Registry the faces use.
type takeoverHost struct{ r *Registry }

var _ takeover.Host = takeoverHost{}

func (h takeoverHost) Cold(e store.DirEntry, rev uint64) (*core.Session, *durable.Link, error) {
	s, err := h.r.coldSession(e, rev)
	if err != nil {
		return nil, nil, err
	}
	return s, durableOf(s), nil
}

func (h takeoverHost) Sessions() []*core.Session { return h.r.List() }

func (h takeoverHost) StandDown(s *core.Session) { localOf(s).standDown() }
