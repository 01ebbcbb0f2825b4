package ask

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpschema"
)

func permReq(t *testing.T, options string) PermissionRequest {
	t.Helper()
	r, err := ParsePermissionRequest(json.RawMessage(`{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":` + options + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const allOptions = `[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"always","name":"Always","kind":"allow_always"},{"optionId":"no","name":"No","kind":"reject_once"},{"optionId":"never","name":"Never","kind":"reject_always"},{"optionId":"future","name":"?","kind":"allow_maybe"}]`

// Only an explicit selection of an offered allow option allows; everything else denies.
func TestDecide(t *testing.T) {
	r := permReq(t, allOptions)
	tests := []struct {
		name     string
		answer   string
		selected string
		allowed  bool
		err      error
		anyErr   bool
	}{
		{"allow once", `{"outcome":{"outcome":"selected","optionId":"yes"}}`, "yes", true, nil, false},
		{"allow always", `{"outcome":{"outcome":"selected","optionId":"always"}}`, "always", true, nil, false},
		{"reject once", `{"outcome":{"outcome":"selected","optionId":"no"}}`, "no", false, nil, false},
		{"reject always", `{"outcome":{"outcome":"selected","optionId":"never"}}`, "never", false, nil, false},
		{"unknown kind denies", `{"outcome":{"outcome":"selected","optionId":"future"}}`, "future", false, nil, false},
		{"cancelled", `{"outcome":{"outcome":"cancelled"}}`, "", false, nil, false},
		{"unknown id", `{"outcome":{"outcome":"selected","optionId":"nope"}}`, "", false, ErrUnknownOption, true},
		{"selected without id", `{"outcome":{"outcome":"selected"}}`, "", false, ErrUnknownOption, true},
		{"malformed outcome", `{"outcome":{"outcome":"maybe"}}`, "", false, nil, true},
		{"empty", `{}`, "", false, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a ClientAnswer
			if err := json.Unmarshal([]byte(tt.answer), &a); err != nil {
				t.Fatal(err)
			}
			o, err := r.Decide(a)
			if (err != nil) != tt.anyErr || tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				// The caller then denies on its own; that denial must not allow.
				o = r.Deny("malformed answer")
				if o.Allowed || o.Reason == "" {
					t.Fatalf("deny = %+v", o)
				}
				return
			}
			if o.Selected != tt.selected || o.Allowed != tt.allowed {
				t.Fatalf("%+v", o)
			}
			if !tt.allowed && tt.selected == "" && o.Reason == "" {
				t.Fatal("a cancelled denial needs a reason")
			}
			if err := acpschema.ValidateResult(acpschema.Stable, "session/request_permission", o.MarshalResult()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Deny picks reject_once, then reject_always, else cancelled.
func TestDeny(t *testing.T) {
	tests := []struct{ options, selected string }{
		{allOptions, "no"},
		{`[{"optionId":"never","name":"N","kind":"reject_always"},{"optionId":"no","name":"No","kind":"reject_once"}]`, "no"},
		{`[{"optionId":"yes","name":"Y","kind":"allow_once"},{"optionId":"never","name":"N","kind":"reject_always"}]`, "never"},
		{`[{"optionId":"yes","name":"Y","kind":"allow_once"}]`, ""},
	}
	for _, tt := range tests {
		o := permReq(t, tt.options).Deny("turn cancelled")
		if o.Selected != tt.selected || o.Allowed || o.Reason != "turn cancelled" {
			t.Errorf("%s: %+v", tt.options, o)
		}
		if err := acpschema.ValidateResult(acpschema.Stable, "session/request_permission", o.MarshalResult()); err != nil {
			t.Error(err)
		}
		cj := o.ClientJSON()
		if cj["allowed"] != false || cj["reason"] != "turn cancelled" {
			t.Errorf("client json %v", cj)
		}
	}
}

func TestAllowPrefersOnce(t *testing.T) {
	o, ok := permReq(t, `[{"optionId":"a","name":"A","kind":"allow_always"},{"optionId":"o","name":"O","kind":"allow_once"}]`).Allow()
	if !ok || o.Selected != "o" || !o.Allowed {
		t.Fatalf("%+v", o)
	}
	if _, ok := permReq(t, `[{"optionId":"n","name":"N","kind":"reject_once"}]`).Allow(); ok {
		t.Fatal("allow without an allow option")
	}
}

func TestParsePermissionRequestMalformed(t *testing.T) {
	for _, p := range []string{
		`{"toolCall":{"toolCallId":"c"},"options":[]}`,
		`{"toolCall":{},"options":[{"optionId":"a","name":"A","kind":"allow_once"}]}`,
		`{"options":[{"optionId":"a","name":"A","kind":"allow_once"}]}`,
		`{"toolCall":{"toolCallId":"c"},"options":"x"}`,
		`nope`,
	} {
		if _, err := ParsePermissionRequest(json.RawMessage(p)); err == nil {
			t.Errorf("%s: want error", p)
		}
	}
}
