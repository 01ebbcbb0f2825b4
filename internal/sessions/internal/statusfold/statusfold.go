// Package statusfold reads a session's status from its log: every change is a logged gateway frame, and Fold
// is the one function that reads them, for the owner as it logs a frame and for a restart and another node's
// copy as they read it back. A log that states nothing yet is a session starting.
package statusfold

import (
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/store"
)

// The gateway frames that state a status.
const (
	SessionReady  = "_gateway/session_ready"  // {status: "idle"}: the agent took the session, starting → idle
	SessionStatus = "_gateway/session_status" // {status, reason}: failed, detached or closed
	TurnStarted   = "_gateway/turn_started"   // → running
	TurnEnded     = "_gateway/turn_ended"     // the running turn's end → idle
)

// States reports whether a frame of method states a status.
func States(method string) bool {
	switch method {
	case SessionReady, SessionStatus, TurnStarted, TurnEnded:
		return true
	}
	return false
}

// Fold is the status and reason after a logged frame with method and params, from status and reason before
// it; other frames leave them. A turn's end makes the session idle only when it ended the running turn
// (runningTurn, "" when the session holds none: a restore clears it before the fold, the owner after).
func Fold(method string, params []byte, status store.Status, reason, runningTurn string) (store.Status, string, error) {
	switch method {
	case TurnStarted:
		return store.StatusRunning, "", nil
	case TurnEnded:
		var p struct {
			TurnID string `json:"turnId"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return status, reason, err
		}
		if status == store.StatusRunning && (runningTurn == "" || runningTurn == p.TurnID) {
			status = store.StatusIdle
		}
	case SessionReady, SessionStatus:
		var p struct {
			Status store.Status `json:"status"`
			Reason string       `json:"reason"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return status, reason, err
		}
		return p.Status, p.Reason, nil
	}
	return status, reason, nil
}
