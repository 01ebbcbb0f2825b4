package ask

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// ElicitationRequest is the part of an agent's `elicitation/create` the gateway interprets: its mode, and in
// form mode the schema every answer is checked against. The params themselves reach clients as they are.
type ElicitationRequest struct {
	Mode          string          `json:"mode"` // "form" or "url"
	Message       string          `json:"message"`
	URL           string          `json:"url,omitempty"`           // url mode: where the user goes
	ElicitationID string          `json:"elicitationId,omitempty"` // url mode: the agent's id, named by elicitation/complete
	ToolCallID    string          `json:"toolCallId,omitempty"`
	Schema        json.RawMessage `json:"requestedSchema,omitempty"` // form mode, as the agent sent it
	props         map[string]propertySchema
	required      []string
}

// propertySchema is one property of a form's restricted JSON Schema: a string (optionally an enum or oneOf
// of consts, with length bounds and a format), a number or integer with bounds, a boolean, or an array of
// enum strings (multi-select).
type propertySchema struct {
	Type      string   `json:"type"`
	Enum      []string `json:"enum"`
	OneOf     []constOption
	MinLength *int     `json:"minLength"`
	MaxLength *int     `json:"maxLength"`
	Format    string   `json:"format"`
	Minimum   *float64 `json:"minimum"`
	Maximum   *float64 `json:"maximum"`
	MinItems  *int     `json:"minItems"`
	MaxItems  *int     `json:"maxItems"`
	Items     *struct {
		Type  string        `json:"type"`
		Enum  []string      `json:"enum"`
		AnyOf []constOption `json:"anyOf"`
	} `json:"items"`
}

type constOption struct {
	Const string `json:"const"`
}

// UnmarshalJSON keeps oneOf (a string enum with titles) apart from the decoder's default handling.
func (p *propertySchema) UnmarshalJSON(b []byte) error {
	type plain propertySchema
	var v struct {
		plain
		OneOf []constOption `json:"oneOf"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = propertySchema(v.plain)
	p.OneOf = v.OneOf
	return nil
}

// ParseElicitationRequest decodes an agent's `elicitation/create` params. A request the gateway cannot put to
// a user safely is an error (the gateway then declines it): an unknown mode, a form whose schema is not a flat
// object of supported properties, a URL that is not absolute http(s) or has no elicitationId.
func ParseElicitationRequest(params json.RawMessage) (ElicitationRequest, error) {
	params = rawjson.ValidUTF8(params)
	var r ElicitationRequest
	if err := json.Unmarshal(params, &r); err != nil {
		return ElicitationRequest{}, fmt.Errorf("elicitation request: %w", err)
	}
	if r.Mode == "" && len(r.Schema) > 0 {
		r.Mode = "form" // the MCP default the ACP schema inherits
	}
	switch r.Mode {
	case "form":
		return r, r.parseSchema()
	case "url":
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return r, errors.New("elicitation url must be an absolute http or https URL")
		}
		if r.ElicitationID == "" {
			return r, errors.New("url elicitation has no elicitationId")
		}
		return r, nil
	default:
		return r, fmt.Errorf("elicitation mode must be \"form\" or \"url\", got %q", r.Mode)
	}
}

func (r *ElicitationRequest) parseSchema() error {
	var s struct {
		Type       string                    `json:"type"`
		Properties map[string]propertySchema `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if len(r.Schema) == 0 || json.Unmarshal(r.Schema, &s) != nil {
		return errors.New("form elicitation has no requestedSchema object")
	}
	if s.Type != "" && s.Type != "object" {
		return fmt.Errorf("requestedSchema.type must be \"object\", got %q", s.Type)
	}
	for name, p := range s.Properties {
		switch p.Type {
		case "string", "number", "integer", "boolean":
		case "array":
			if p.Items == nil || p.Items.Type != "string" || len(p.Items.Enum)+len(p.Items.AnyOf) == 0 {
				return fmt.Errorf("property %q: an array must be a multi-select of enum strings", name)
			}
		default:
			return fmt.Errorf("property %q: type %q is not a primitive the form can ask for", name, p.Type)
		}
	}
	for _, name := range s.Required {
		if _, ok := s.Properties[name]; !ok {
			return fmt.Errorf("required property %q is not defined", name)
		}
	}
	r.props, r.required = s.Properties, s.Required
	return nil
}

// ErrInvalidElicitationAnswer is an answer that is not accept/decline/cancel, or accepted content that does
// not match the request's schema. The request stays pending.
var ErrInvalidElicitationAnswer = errors.New("invalid elicitation answer")

// Decide maps a client's answer to an outcome: accept with content that matches the schema (form mode) or
// without content (url mode), decline or cancel. Anything else is an ErrInvalidElicitationAnswer.
func (r ElicitationRequest) Decide(a ClientAnswer) (Outcome, error) {
	switch a.Action {
	case "decline", "cancel":
		return Outcome{Action: a.Action}, nil
	case "accept":
	default:
		return Outcome{}, fmt.Errorf("%w: action must be \"accept\", \"decline\" or \"cancel\", got %q", ErrInvalidElicitationAnswer, a.Action)
	}
	if r.Mode == "url" {
		if len(a.Content) > 0 && string(a.Content) != "null" && string(a.Content) != "{}" {
			return Outcome{}, fmt.Errorf("%w: a url elicitation is accepted without content", ErrInvalidElicitationAnswer)
		}
		return Outcome{Action: "accept", Allowed: true}, nil
	}
	content, err := r.check(a.Content)
	if err != nil {
		return Outcome{}, fmt.Errorf("%w: %v", ErrInvalidElicitationAnswer, err)
	}
	return Outcome{Action: "accept", Allowed: true, Content: content}, nil
}

// check validates accepted form content against the schema and returns it re-encoded (keys sorted).
func (r ElicitationRequest) check(raw json.RawMessage) (json.RawMessage, error) {
	content := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &content); err != nil {
			return nil, errors.New("content must be an object")
		}
	}
	names := make([]string, 0, len(content))
	for name := range content {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, ok := r.props[name]
		if !ok {
			return nil, fmt.Errorf("content.%s is not in the requested schema", name)
		}
		if err := p.check(content[name]); err != nil {
			return nil, fmt.Errorf("content.%s: %v", name, err)
		}
	}
	for _, name := range r.required {
		if _, ok := content[name]; !ok {
			return nil, fmt.Errorf("content.%s is required", name)
		}
	}
	return json.Marshal(content)
}

func (p propertySchema) check(v json.RawMessage) error {
	switch p.Type {
	case "string":
		var s string
		if json.Unmarshal(v, &s) != nil {
			return errors.New("must be a string")
		}
		return p.checkString(s)
	case "number", "integer":
		var n float64
		if json.Unmarshal(v, &n) != nil {
			return fmt.Errorf("must be a %s", p.Type)
		}
		if p.Type == "integer" && n != float64(int64(n)) {
			return errors.New("must be an integer")
		}
		if p.Minimum != nil && n < *p.Minimum {
			return fmt.Errorf("must be at least %v", *p.Minimum)
		}
		if p.Maximum != nil && n > *p.Maximum {
			return fmt.Errorf("must be at most %v", *p.Maximum)
		}
	case "boolean":
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return errors.New("must be a boolean")
		}
	case "array":
		var ss []string
		if json.Unmarshal(v, &ss) != nil {
			return errors.New("must be an array of strings")
		}
		if p.MinItems != nil && len(ss) < *p.MinItems || p.MaxItems != nil && len(ss) > *p.MaxItems {
			return errors.New("has too few or too many items")
		}
		allowed := append([]string(nil), p.Items.Enum...)
		for _, o := range p.Items.AnyOf {
			allowed = append(allowed, o.Const)
		}
		for _, s := range ss {
			if !contains(allowed, s) {
				return fmt.Errorf("%q is not one of the choices", s)
			}
		}
	}
	return nil
}

func (p propertySchema) checkString(s string) error {
	n := len([]rune(s))
	if p.MinLength != nil && n < *p.MinLength {
		return fmt.Errorf("must be at least %d characters", *p.MinLength)
	}
	if p.MaxLength != nil && n > *p.MaxLength {
		return fmt.Errorf("must be at most %d characters", *p.MaxLength)
	}
	if len(p.Enum) > 0 || len(p.OneOf) > 0 {
		allowed := append([]string(nil), p.Enum...)
		for _, o := range p.OneOf {
			allowed = append(allowed, o.Const)
		}
		if !contains(allowed, s) {
			return fmt.Errorf("%q is not one of the choices", s)
		}
	}
	return checkFormat(p.Format, s)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Decline is the answer the gateway gives on its own (cancel, close, deadline, agent exit, a malformed
// request): the user was never asked, so nothing is accepted.
func (r ElicitationRequest) Decline(reason string) Outcome {
	return Outcome{Action: "decline", Reason: reason}
}
