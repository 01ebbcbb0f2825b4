package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/store"
)

// MaxTitleRunes bounds a title a person gives a session.
const MaxTitleRunes = 200

// A rename is logged as the agent's own title is, a session_info_update, so the title folds the same way live,
// after a restart and on other nodes (the log is the session's only state), and a title the agent sets
// later replaces it as one it set before would.

type RenameArgs struct {
	Title string `json:"title"`
}

// cleanTitle trims title and checks it is 1 to MaxTitleRunes characters with no control characters.
func cleanTitle(title string) (string, error) {
	t := strings.TrimSpace(title)
	if t == "" || !utf8.ValidString(t) || utf8.RuneCountInString(t) > MaxTitleRunes {
		return "", fmt.Errorf("%w: title must be 1 to %d characters", sessionerr.ErrBadRequest, MaxTitleRunes)
	}
	if strings.IndexFunc(t, unicode.IsControl) >= 0 {
		return "", fmt.Errorf("%w: title must not contain control characters", sessionerr.ErrBadRequest)
	}
	return t, nil
}

// RenameAs sets the session's title for who (a collaborator at least) and returns it as stored.
func (s *Session) RenameAs(ctx context.Context, who principal.Principal, title string) (string, error) {
	t, err := cleanTitle(title)
	if err != nil {
		return "", err
	}
	if err := s.allow(who, access.Act); err != nil {
		return "", err
	}
	if s.Status() == store.StatusClosed {
		return "", sessionerr.ErrClosed
	}
	return t, s.run.Rename(ctx, who, t)
}

// LogTitle logs title, checked, as the session's on the node that runs it.
func (c Control) LogTitle(title string) error {
	s := c.s
	s.mu.Lock()
	sid := s.agent.SID
	s.mu.Unlock()
	params, err := json.Marshal(map[string]any{"sessionId": sid, "update": map[string]any{"sessionUpdate": "session_info_update", "title": title}})
	if err != nil {
		return err
	}
	s.logUpdate(params) // not counted as an update from the agent
	s.noteDir()         // the directory entry carries the title for session lists
	return nil
}
