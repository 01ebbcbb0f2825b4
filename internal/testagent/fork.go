package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	acp "github.com/coder/acp-go-sdk"
)

// Forking and deleting sessions (-fork, -delete, -record DIR). Each agent process the gateway starts serves
// one gateway session, so a fork reaches a fresh process that only knows the source's id, as a real agent
// that keeps its sessions on disk would be asked; it answers a new id and remembers what it was forked
// from. With -record, session ids carry the process id (unique across processes), echo turns name the
// session they ran in, and session/fork and session/delete leave a file in DIR that a test can look for.

// sessionID is the id of the agent's n-th new session.
func (a *agent) sessionID(n int) string {
	if a.recordDir != "" {
		return "ta-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(n)
	}
	return "ta-" + strconv.Itoa(n)
}

// UnstableForkSession implements session/fork (advertised with -fork): a new session id, "<source>-fork-<pid>".
func (a *agent) UnstableForkSession(ctx context.Context, p acp.UnstableForkSessionRequest) (acp.UnstableForkSessionResponse, error) {
	if !a.canFork {
		return acp.UnstableForkSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionFork)
	}
	id := acp.SessionId(string(p.SessionId) + "-fork-" + strconv.Itoa(os.Getpid()))
	a.mu.Lock()
	if a.forkedFrom == nil {
		a.forkedFrom = map[acp.SessionId]acp.SessionId{}
	}
	a.forkedFrom[id] = p.SessionId
	a.mu.Unlock()
	a.recordDirs(id, p.AdditionalDirectories)
	a.record("forked-" + string(p.SessionId) + "-as-" + string(id))
	return acp.UnstableForkSessionResponse{SessionId: id}, nil
}

// DeleteSession implements session/delete (advertised with -delete).
func (a *agent) DeleteSession(ctx context.Context, p acp.DeleteSessionRequest) (acp.DeleteSessionResponse, error) {
	if !a.canDelete {
		return acp.DeleteSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionDelete)
	}
	a.record("deleted-" + string(p.SessionId))
	return acp.DeleteSessionResponse{}, nil
}

// record leaves an empty file named name in the -record directory, written before the agent answers.
func (a *agent) record(name string) {
	if a.recordDir != "" {
		_ = os.WriteFile(filepath.Join(a.recordDir, name), nil, 0o600)
	}
}

// sessionLines are the echo mode's lines about the session itself (with -record): its id and, for a fork,
// its source.
func (a *agent) sessionLines(sid acp.SessionId) string {
	if a.recordDir == "" {
		return ""
	}
	a.mu.Lock()
	from := a.forkedFrom[sid]
	a.mu.Unlock()
	s := fmt.Sprintf("agent session %s\n", sid)
	if from != "" {
		s += fmt.Sprintf("forked from %s\n", from)
	}
	return s
}
