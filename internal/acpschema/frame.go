package acpschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ValidateFrame validates one JSON-RPC 2.0 message as it travels on a socket: the envelope, then the params
// of a request or notification by its method. `_gateway/*` methods are the gateway's own extension
// notifications and other `_`-prefixed methods are extensions the schema leaves open, so only their envelope
// is checked. A response carries no method, so only its envelope is checked (use ValidateResult with the
// method of the request it answers).
func ValidateFrame(k Kind, frame []byte) error {
	var f struct {
		JSONRPC string           `json:"jsonrpc"`
		ID      *json.RawMessage `json:"id"`
		Method  *string          `json:"method"`
		Params  json.RawMessage  `json:"params"`
		Result  json.RawMessage  `json:"result"`
		Error   json.RawMessage  `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(frame))
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("acpschema: frame is not a JSON object: %w", err)
	}
	// `"id": null` decodes to a nil pointer, yet it is a present id: JSON-RPC answers a request it could
	// not parse with an error whose id is null.
	if f.ID == nil {
		var keys map[string]json.RawMessage
		if json.Unmarshal(frame, &keys) == nil {
			if raw, ok := keys["id"]; ok {
				f.ID = &raw
			}
		}
	}
	if dec.More() {
		return errors.New("acpschema: trailing data after frame")
	}
	if f.JSONRPC != "2.0" {
		return fmt.Errorf("acpschema: jsonrpc must be \"2.0\", got %q", f.JSONRPC)
	}
	if f.ID != nil {
		if err := checkID(*f.ID); err != nil {
			return err
		}
	}
	if f.Method == nil {
		if f.ID == nil {
			return errors.New("acpschema: frame has neither method nor id")
		}
		if (f.Result == nil) == (f.Error == nil) {
			return errors.New("acpschema: a response needs exactly one of result and error")
		}
		if f.Error != nil {
			return checkError(f.Error)
		}
		return nil
	}
	method := *f.Method
	if method == "" {
		return errors.New("acpschema: empty method")
	}
	if f.Result != nil || f.Error != nil {
		return errors.New("acpschema: a request carries no result or error")
	}
	if strings.HasPrefix(method, "_") {
		if f.Params != nil && !isObjectOrArray(f.Params) {
			return fmt.Errorf("acpschema: %s: params must be an object or array", method)
		}
		return nil
	}
	if f.Params == nil {
		return fmt.Errorf("acpschema: %s: missing params", method)
	}
	d, err := getDoc(k)
	if err != nil {
		return err
	}
	e, ok := d.methods[method]
	if !ok {
		return fmt.Errorf("acpschema: %s schema has no method %q", k, method)
	}
	def := e[roleRequest]
	if f.ID == nil {
		def = e[roleNotification]
	}
	if def == "" {
		if f.ID == nil {
			return fmt.Errorf("acpschema: %s is a request, sent as a notification", method)
		}
		return fmt.Errorf("acpschema: %s is a notification, sent with an id", method)
	}
	return ValidateDef(k, def, f.Params)
}

func checkID(id json.RawMessage) error {
	var v any
	if err := json.Unmarshal(id, &v); err != nil {
		return fmt.Errorf("acpschema: bad id: %w", err)
	}
	switch v.(type) {
	case string, float64, nil:
		return nil
	}
	return fmt.Errorf("acpschema: id must be a string, number or null, got %s", id)
}

func checkError(raw json.RawMessage) error {
	var e struct {
		Code    *int64  `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Code == nil || e.Message == nil {
		return fmt.Errorf("acpschema: error must be {code:int, message:string}, got %s", raw)
	}
	return nil
}

func isObjectOrArray(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}
