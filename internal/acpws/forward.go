package acpws

import (
	"encoding/json"
	"errors"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/frameout"
)

// logFrame is the part of a logged frame the writer looks at to decide whether to forward it.
type logFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
		} `json:"update"`
		PermissionID string `json:"permissionId"` // _gateway/permission_resolved
		RequestID    string `json:"requestId"`    // _gateway/elicitation_resolved
		Mode         string `json:"mode"`         // elicitation/create
		Meta         struct {
			Gateway struct {
				TurnID string `json:"turnId"`
			} `json:"gateway"`
		} `json:"_meta"`
	} `json:"params"`
}

// forward writes one log frame if this socket forwards it. Most frames are updates every socket forwards
// as they are (the log says so); the others are decoded to see whose turn, which permission.
func (w *writer) forward(a *attachment, e eventlog.Entry) error {
	if e.Kind == eventlog.KindUpdate {
		return w.writeFor(a.s.ID, e.Frame)
	}
	var f logFrame
	if err := json.Unmarshal(e.Frame, &f); err != nil {
		return nil // the log only holds frames the gateway encoded; never expected
	}
	switch f.Method {
	case "session/update":
		if f.Params.Update.SessionUpdate == "user_message_chunk" && e.Seq > a.replayUntil && w.c.isOwnTurn(f.Params.Meta.Gateway.TurnID) {
			return nil // the prompt's sender knows what it sent
		}
		return w.writeFor(a.s.ID, e.Frame)
	case "session/request_permission":
		if e.Seq <= a.replayUntil {
			return nil // history; still-pending ones are re-sent after the attach
		}
		var id string
		if json.Unmarshal(f.ID, &id) != nil || !a.s.PermissionPending(id) {
			return nil
		}
		return w.ask(a, id, e.Frame)
	case "elicitation/create":
		// Only to a client that advertised the request's mode; the others never see it.
		if e.Seq <= a.replayUntil || !w.c.elicits(f.Params.Mode) {
			return nil
		}
		var id string
		if json.Unmarshal(f.ID, &id) != nil || a.s.ElicitationMode(id) == "" {
			return nil
		}
		return w.ask(a, id, e.Frame)
	case "elicitation/complete":
		if !w.c.elicits("url") {
			return nil
		}
		return w.writeFor(a.s.ID, e.Frame)
	case "_gateway/permission_resolved", "_gateway/elicitation_resolved":
		// Resolved by someone else (REST, another socket, the gateway on cancel/close/deadline): withdraw the
		// request from this client with ACP's `$/cancel_request`, so its UI stops asking. Its late answer, if
		// any, is ignored.
		id := f.Params.PermissionID + f.Params.RequestID // one of them is set
		if _, ok := a.asked[id]; !ok {
			return nil
		}
		delete(a.asked, id)
		if w.c.takeAnswered(id) {
			return nil
		}
		b, _ := frameout.Notification("$/cancel_request", map[string]any{"requestId": id})
		return w.writeFor(a.s.ID, b)
	}
	return nil // other `_gateway/*` frames: not ACP
}

// ask sends a permission request frame to the client and remembers it until it is resolved.
func (w *writer) ask(a *attachment, id string, frame []byte) error {
	if _, dup := a.asked[id]; dup {
		return nil
	}
	a.asked[id] = struct{}{}
	return w.writeFor(a.s.ID, frame)
}

// sendPending writes the request frames of a's permissions and elicitations still pending and logged at or
// before upTo (elicitations only in a mode the client advertised).
func (w *writer) sendPending(a *attachment, upTo uint64) error {
	for _, e := range a.s.PendingFrames(upTo) {
		var f struct {
			ID     string `json:"id"`
			Method string `json:"method"`
			Params struct {
				Mode string `json:"mode"`
			} `json:"params"`
		}
		if json.Unmarshal(e.Frame, &f) != nil {
			continue
		}
		if f.Method == "elicitation/create" && !w.c.elicits(f.Params.Mode) {
			continue
		}
		if err := w.ask(a, f.ID, e.Frame); err != nil {
			return err
		}
	}
	return nil
}

func readErrToClose(err error) error {
	var ce *closeErr
	if errors.As(err, &ce) {
		return ce
	}
	return err
}

// elicitationCaps is what a client advertised in `clientCapabilities.elicitation`: a mode is supported only
// when its member is present and not null ({} and {"form":null} advertise nothing).
type elicitationCaps struct {
	Form json.RawMessage `json:"form"`
	URL  json.RawMessage `json:"url"`
}

func (e elicitationCaps) has(mode string) bool {
	var v json.RawMessage
	switch mode {
	case "form":
		v = e.Form
	case "url":
		v = e.URL
	}
	return len(v) > 0 && string(v) != "null"
}

// elicits reports whether the client advertised elicitation in mode.
func (c *conn) elicits(mode string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.elicit.has(mode)
}
