package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/acp-gateway/gateway/internal/sessions"
)

// turnWaitMax bounds `timeout`: a client that wants to wait longer asks again (the turn goes on either way).
const turnWaitMax = 24 * time.Hour

// waitParams is how long a request is held on a turn: `wait=true`, optionally bounded by `timeout`.
type waitParams struct {
	wait    bool
	timeout time.Duration // 0 = until the turn ends, asks a user, or the client goes away
}

func parseWait(r *http.Request) (waitParams, error) {
	wait, err := boolQuery(r, "wait")
	if err != nil {
		return waitParams{}, err
	}
	p := waitParams{wait: wait}
	v := r.URL.Query().Get("timeout")
	if v == "" {
		return p, nil
	}
	if !wait {
		return waitParams{}, badRequest("timeout needs wait=true")
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > turnWaitMax {
		return waitParams{}, badRequest("timeout must be a duration from 1ms to %s, such as 30s", turnWaitMax)
	}
	p.timeout = d
	return p, nil
}

// awaitTurn holds the request until the turn ends or stops on a permission request (or the timeout), and
// reports where it stands. It reports false when the client went away: nothing is to be written then.
func awaitTurn(r *http.Request, sess *sessions.Session, t *sessions.Turn, p waitParams) (sessions.TurnState, bool) {
	ctx := r.Context()
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	st, _ := sess.AwaitTurn(ctx, t)
	return st, r.Context().Err() == nil
}

// turnReply is the answer for a turn's state: 200, but 202 when a wait ended with the turn still running
// (its timeout passed), and 502 turn_failed, naming the turn, when it failed.
func turnReply(st sessions.TurnState, waited bool) (int, error) {
	switch {
	case st.Err != nil:
		p := problem(http.StatusBadGateway, "turn_failed", "the turn failed: "+st.Err.Error())
		p.TurnID, p.StopReason, p.TurnOutcome = st.TurnID, st.StopReason, st.Outcome
		return 0, p
	case waited && st.Status == sessions.TurnRunning:
		return http.StatusAccepted, nil
	}
	return http.StatusOK, nil
}

// writeTurnState writes a turn's state as turnReply says.
func writeTurnState(w http.ResponseWriter, st sessions.TurnState, waited bool) error {
	code, err := turnReply(st, waited)
	if err != nil {
		return err
	}
	writeJSON(w, code, st)
	return nil
}

// getTurn serves `GET /v1/sessions/{id}/turn`: the running turn (else the last one) now, or with `wait=true`
// once it ends or asks a user, so a second shell can join a turn another started.
func (s *Server) getTurn(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	p, err := parseWait(r)
	if err != nil {
		return err
	}
	t, err := sess.LatestTurn()
	if err != nil {
		return err
	}
	st := sess.TurnState(t)
	if p.wait {
		var ok bool
		if st, ok = awaitTurn(r, sess, t, p); !ok {
			return nil // the caller went away; the turn goes on
		}
	}
	return writeTurnState(w, st, p.wait)
}
