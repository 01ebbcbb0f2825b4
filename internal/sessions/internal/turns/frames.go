package turns

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agentusage"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/promptkey"
	"github.com/acp-gateway/gateway/internal/translate"
	"github.com/acp-gateway/gateway/internal/translate/rawjson"
	acp "github.com/coder/acp-go-sdk"
)

// The frames that start and end a turn, `_gateway/turn_started` and `_gateway/turn_ended`, say all a
// restart or a copy needs to rebuild the turn: these read them back as the live session wrote them.

// Started is what a `_gateway/turn_started` frame says.
type Started struct {
	TurnID         string         `json:"turnId"`
	StartedAt      time.Time      `json:"startedAt"`
	Actor          *principal.Ref `json:"actor"`
	IdempotencyKey *promptkey.Key `json:"idempotencyKey"`
}

// ReadStarted reads a `_gateway/turn_started` frame's params.
func ReadStarted(params []byte) (Started, error) {
	var p Started
	err := json.Unmarshal(params, &p)
	return p, err
}

// ReadEnded reads a `_gateway/turn_ended` frame's params: how the turn ended as lastTurn lists it, and its
// error as the live turn's result had it (nil when it did not fail).
func ReadEnded(params []byte) (lt *LastTurnView, turnErr error, err error) {
	var p struct {
		TurnID     string           `json:"turnId"`
		StopReason string           `json:"stopReason"`
		EndedAt    time.Time        `json:"endedAt"`
		Error      json.RawMessage  `json:"error"`
		Usage      *agentusage.Turn `json:"usage"`
	}
	if err = json.Unmarshal(params, &p); err != nil {
		return nil, nil, err
	}
	lt = &LastTurnView{TurnID: p.TurnID, StopReason: p.StopReason, EndedAt: p.EndedAt, Usage: p.Usage}
	if len(p.Error) > 0 && string(p.Error) != "null" {
		if err := json.Unmarshal(p.Error, &lt.Error); err != nil {
			return nil, nil, err
		}
		turnErr = loggedError(p.Error)
		if lt.StopReason != translate.StopCancelled {
			lt.StopReason = translate.StopError // logged before failed turns said so: end_turn with an error
		}
	}
	lt.Outcome = translate.OutcomeOf(lt.StopReason)
	return lt, turnErr, nil
}

// ErrorJSON describes a failed turn for clients: the agent's JSON-RPC error when it sent one, its data
// redacted and bounded (a larger one becomes clipped text).
func ErrorJSON(err error) map[string]any {
	var re *acp.RequestError
	if errors.As(agenterr.Clean(err), &re) {
		m := map[string]any{"code": re.Code, "message": re.Message}
		if re.Data != nil {
			m["data"] = re.Data
		}
		return m
	}
	return map[string]any{"message": agenterr.Clip(rawjson.RedactText(strings.ToValidUTF8(err.Error(), "\uFFFD")), agenterr.MaxData)}
}

// loggedError is the error ErrorJSON described: the agent's JSON-RPC error when it had a code.
func loggedError(raw json.RawMessage) error {
	var e struct {
		Code    *int            `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return errors.New(string(raw))
	}
	if e.Code == nil {
		return errors.New(e.Message)
	}
	re := &acp.RequestError{Code: *e.Code, Message: e.Message}
	if len(e.Data) > 0 {
		re.Data = e.Data
	}
	return agenterr.RPCError{Err: re}
}
