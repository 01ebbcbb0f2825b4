package inproc

import (
	"errors"
	"regexp"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

func TestPromptText(t *testing.T) {
	blocks := []acp.ContentBlock{acp.TextBlock("one"), acp.ResourceLinkBlock("x", "file:///x"), acp.TextBlock("two")}
	if got := PromptText(blocks); got != "one\ntwo" {
		t.Errorf("PromptText = %q", got)
	}
}

func TestUnknownSession(t *testing.T) {
	var re *acp.RequestError
	if err := UnknownSession("s_1"); !errors.As(err, &re) || re.Code != -32002 {
		t.Fatalf("UnknownSession = %#v, want a -32002 RequestError", err)
	}
}

func TestNewSessionID(t *testing.T) {
	a, b := NewSessionID("demo"), NewSessionID("demo")
	if !regexp.MustCompile(`^demo_[0-9a-f]{16}$`).MatchString(string(a)) {
		t.Errorf("NewSessionID = %q", a)
	}
	if a == b {
		t.Errorf("two ids alike: %q", a)
	}
}
