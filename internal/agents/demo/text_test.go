package demo

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"
)

func TestSplitChunks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"quick", []string{"quick"}},
		{"two words", []string{"two ", "words"}},
		{"Please tidy up the notes file", []string{"Please tidy ", "up the ", "notes file"}},
		{"  lead and\ntrail  ", []string{"  lead ", "and\n", "trail  "}},
		{"a b c d e f g", []string{"a b ", "c d ", "e f g"}},
		{"   ", []string{"   "}},
	} {
		got := splitChunks(tc.in, 3)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitChunks(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Join(got, "") != tc.in {
			t.Errorf("splitChunks(%q) does not concatenate back", tc.in)
		}
	}
}

func TestHeadline(t *testing.T) {
	if got := headline("  a\n\tb  c ", 60); got != "a b c" {
		t.Errorf("headline collapses whitespace: got %q", got)
	}
	if got := headline("héllo wörld", 4); got != "héll" {
		t.Errorf("headline cuts runes: got %q", got)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind promptKind
		arg  string
	}{
		{" quick ", kindQuick, ""},
		{"quickly", kindFull, ""},
		{"/help", kindHelp, ""},
		{"/echo  hi there ", kindEcho, "hi there"},
		{"/echoing", kindFull, ""},
		{"/echo", kindEcho, "(nothing to echo)"},
	} {
		if kind, arg := classify(tc.in); kind != tc.kind || arg != tc.arg {
			t.Errorf("classify(%q) = %v, %q; want %v, %q", tc.in, kind, arg, tc.kind, tc.arg)
		}
	}
}

func TestJudge(t *testing.T) {
	offered := permissionOptions()
	sel := func(id string) acp.RequestPermissionResponse { return selectOption(id) }
	for _, tc := range []struct {
		name string
		resp acp.RequestPermissionResponse
		err  error
		want verdict
	}{
		{"allow once", sel("allow-once"), nil, verdict{allowed: true}},
		{"allow always", sel("allow-always"), nil, verdict{allowed: true}},
		{"reject", sel("reject-once"), nil, verdict{reason: "rejected by the user"}},
		{"unknown", sel("yes"), nil, verdict{reason: `unknown option "yes"`}},
		{"cancelled", acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil, verdict{cancelled: true, reason: "cancelled"}},
		{"empty", acp.RequestPermissionResponse{}, nil, verdict{reason: "no outcome"}},
		{"error", acp.RequestPermissionResponse{}, errors.New("x"), verdict{reason: "permission request failed: x"}},
	} {
		if got := judge(offered, tc.resp, tc.err); got != tc.want {
			t.Errorf("%s: judge = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
