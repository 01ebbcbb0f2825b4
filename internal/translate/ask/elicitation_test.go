package ask

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const testForm = `{"sessionId":"s","mode":"form","message":"m","requestedSchema":{"type":"object","properties":{
	"name":{"type":"string","minLength":2,"maxLength":5},
	"mail":{"type":"string","format":"email"},
	"day":{"type":"string","format":"date"},
	"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
	"n":{"type":"integer","minimum":1,"maximum":3},
	"x":{"type":"number"},
	"ok":{"type":"boolean","default":true},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"maxItems":1}},
	"required":["name"]}}`

// TestElicitationDecide: accepted content is checked property by property against the restricted schema;
// decline and cancel need no content; nothing else is an answer.
func TestElicitationDecide(t *testing.T) {
	r, err := ParseElicitationRequest(json.RawMessage(testForm))
	if err != nil {
		t.Fatal(err)
	}
	for content, want := range map[string]string{
		`{"name":"Ann"}`: "",
		`{"name":"Ann","mail":"a@b.example","day":"2026-01-02","size":"l","n":2,"x":-0.5,"ok":false,"tags":["b"]}`: "",
		`{}`:                                "content.name is required",
		`{"name":"A"}`:                      "at least 2",
		`{"name":"Annabel"}`:                "at most 5",
		`{"name":"Ann","mail":"nope"}`:      "email",
		`{"name":"Ann","day":"02/01/2026"}`: "date",
		`{"name":"Ann","size":"m"}`:         "not one of the choices",
		`{"name":"Ann","n":4}`:              "at most 3",
		`{"name":"Ann","n":1.5}`:            "integer",
		`{"name":"Ann","x":"1"}`:            "number",
		`{"name":"Ann","ok":"yes"}`:         "boolean",
		`{"name":"Ann","tags":["a","b"]}`:   "too many",
		`{"name":"Ann","tags":["c"]}`:       "not one of the choices",
		`{"name":"Ann","extra":1}`:          "not in the requested schema",
		`["Ann"]`:                           "must be an object",
	} {
		o, err := r.Decide(ClientAnswer{Action: "accept", Content: json.RawMessage(content)})
		switch {
		case want == "" && (err != nil || o.Action != "accept" || !o.Allowed):
			t.Errorf("%s: %+v %v", content, o, err)
		case want != "" && (!errors.Is(err, ErrInvalidElicitationAnswer) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want an error saying %q", content, err, want)
		}
	}
	for _, a := range []string{"decline", "cancel"} {
		if o, err := r.Decide(ClientAnswer{Action: a}); err != nil || string(o.MarshalResult()) != `{"action":"`+a+`"}` {
			t.Errorf("%s: %s %v", a, o.MarshalResult(), err)
		}
	}
	if _, err := r.Decide(ClientAnswer{}); !errors.Is(err, ErrInvalidElicitationAnswer) {
		t.Errorf("no action: %v", err)
	}
	o, _ := r.Decide(ClientAnswer{Action: "accept", Content: json.RawMessage(`{"name":"Ann"}`)})
	if got := string(o.MarshalResult()); got != `{"action":"accept","content":{"name":"Ann"}}` {
		t.Errorf("result %s", got)
	}
}

// TestElicitationRequestsRefused: requests the gateway cannot put to a user safely are errors (it declines
// them): a URL a browser would run or that is relative, a url request without its id, nested schemas.
func TestElicitationRequestsRefused(t *testing.T) {
	for _, params := range []string{
		`{"mode":"url","message":"m","elicitationId":"e","url":"javascript:alert(1)"}`,
		`{"mode":"url","message":"m","elicitationId":"e","url":"/login"}`,
		`{"mode":"url","message":"m","url":"https://example.com/"}`,
		`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"o":{"type":"object"}}}}`,
		`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{},"required":["x"]}}`,
		`{"mode":"form","message":"m"}`,
		`{"mode":"sms","message":"m"}`,
	} {
		if _, err := ParseElicitationRequest(json.RawMessage(params)); err == nil {
			t.Errorf("accepted %s", params)
		}
	}
	r, err := ParseElicitationRequest(json.RawMessage(`{"mode":"url","message":"m","elicitationId":"e","url":"https://example.com/x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Decide(ClientAnswer{Action: "accept", Content: json.RawMessage(`{"a":1}`)}); !errors.Is(err, ErrInvalidElicitationAnswer) {
		t.Errorf("url accepted with content: %v", err)
	}
}
