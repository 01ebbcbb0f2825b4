package demo

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/acp-go-sdk"
)

const fullPrompt = "Please tidy up the notes file"

// fullTurnKinds is the update sequence of a first full turn (6 words → 3 echo chunks).
var fullTurnKinds = []string{
	"agent_thought_chunk",
	"agent_message_chunk", "agent_message_chunk", "agent_message_chunk", "agent_message_chunk",
	"plan",
	"tool_call", "tool_call_update", "tool_call_update",
	"plan",
	"tool_call", "tool_call_update",
	"plan",
	"usage_update",
	"session_info_update",
	"agent_message_chunk",
	"plan",
}

func TestFullTurnAllowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))

		stop, err := h.prompt(sid, fullPrompt)
		if err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("prompt = %q, %v; want end_turn", stop, err)
		}
		us := h.client.sessionUpdates(sid)[before:]
		if got := kinds(us); !reflect.DeepEqual(got, fullTurnKinds) {
			t.Fatalf("update kinds:\n got %q\nwant %q", got, fullTurnKinds)
		}
		if got, want := messageText(us), "You said: "+fullPrompt+ClosingApplied; got != want {
			t.Errorf("message text = %q, want %q", got, want)
		}
		if got := us[0].AgentThoughtChunk.Content.Text.Text; got != "Thinking about: "+fullPrompt {
			t.Errorf("thought = %q", got)
		}

		read := us[6].ToolCall
		if read.ToolCallId != "read_1" || read.Title != "Read README.md" || read.Kind != acp.ToolKindRead ||
			read.Status != acp.ToolCallStatusPending || len(read.Locations) != 1 || read.Locations[0].Path != testCwd+"/README.md" {
			t.Errorf("read tool_call = %+v", read)
		}
		if u := us[7].ToolCallUpdate; u.ToolCallId != "read_1" || *u.Status != acp.ToolCallStatusInProgress {
			t.Errorf("read in_progress update = %+v", u)
		}
		done := us[8].ToolCallUpdate
		if done.ToolCallId != "read_1" || *done.Status != acp.ToolCallStatusCompleted || len(done.Content) != 1 ||
			done.Content[0].Content == nil || !strings.HasPrefix(done.Content[0].Content.Content.Text.Text, "# Demo project\n") {
			t.Errorf("read completed update = %+v", done)
		}

		edit := us[10].ToolCall
		if edit.ToolCallId != "edit_1" || edit.Kind != acp.ToolKindEdit || edit.Status != acp.ToolCallStatusPending ||
			len(edit.Content) != 1 || edit.Content[0].Diff == nil || edit.Content[0].Diff.Path != testCwd+"/notes.md" ||
			*edit.Content[0].Diff.OldText != "old line\n" || edit.Content[0].Diff.NewText != "new line\n" {
			t.Errorf("edit tool_call = %+v", edit)
		}
		applied := us[11].ToolCallUpdate
		if applied.ToolCallId != "edit_1" || *applied.Status != acp.ToolCallStatusCompleted {
			t.Errorf("edit update = %+v", applied)
		}
		if raw, _ := json.Marshal(applied.RawOutput); string(raw) != `{"applied":true}` {
			t.Errorf("edit rawOutput = %s", raw)
		}

		wantPlans := [][]acp.PlanEntryStatus{
			{"in_progress", "pending", "pending"},
			{"completed", "in_progress", "pending"},
			{"completed", "completed", "in_progress"},
			{"completed", "completed", "completed"},
		}
		var plans [][]acp.PlanEntryStatus
		for _, u := range us {
			if u.Plan != nil {
				var st []acp.PlanEntryStatus
				for _, e := range u.Plan.Entries {
					st = append(st, e.Status)
				}
				plans = append(plans, st)
			}
		}
		if !reflect.DeepEqual(plans, wantPlans) {
			t.Errorf("plan statuses = %v, want %v", plans, wantPlans)
		}

		usage := us[13].UsageUpdate
		if usage.Used != 1000+len(fullPrompt) || usage.Size != 200000 || usage.Cost == nil || usage.Cost.Currency != "USD" || usage.Cost.Amount != 0 {
			t.Errorf("usage_update = %+v", usage)
		}
		if title := us[14].SessionInfoUpdate.Title; title == nil || *title != "Demo: "+fullPrompt {
			t.Errorf("session title = %v", title)
		}

		perms := h.client.permissions()
		if len(perms) != 1 {
			t.Fatalf("%d permission requests, want 1", len(perms))
		}
		tc := perms[0].ToolCall
		if perms[0].SessionId != sid || tc.ToolCallId != "edit_1" || *tc.Title != "Edit notes.md" || *tc.Kind != acp.ToolKindEdit ||
			*tc.Status != acp.ToolCallStatusPending || len(tc.Content) != 1 || tc.Content[0].Diff == nil ||
			len(tc.Locations) != 1 || tc.Locations[0].Path != testCwd+"/notes.md" {
			t.Errorf("permission tool call = %+v", tc)
		}
		var opts []string
		for _, o := range perms[0].Options {
			opts = append(opts, string(o.OptionId)+"/"+o.Name+"/"+string(o.Kind))
		}
		wantOpts := []string{"allow-once/Allow once/allow_once", "allow-always/Always allow/allow_always", "reject-once/Reject/reject_once"}
		if !reflect.DeepEqual(opts, wantOpts) {
			t.Errorf("permission options = %q, want %q", opts, wantOpts)
		}
	})
}

func TestSecondTurnNumbersAndUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		sid := h.newSession()
		if _, err := h.prompt(sid, fullPrompt); err != nil {
			t.Fatal(err)
		}
		before := len(h.client.sessionUpdates(sid))
		second := "and again"
		if stop, err := h.prompt(sid, second); err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("second prompt = %q, %v", stop, err)
		}
		var ids []string
		var used int
		for _, u := range h.client.sessionUpdates(sid)[before:] {
			switch {
			case u.ToolCall != nil:
				ids = append(ids, string(u.ToolCall.ToolCallId))
			case u.SessionInfoUpdate != nil:
				t.Errorf("second turn sent a session_info_update")
			case u.UsageUpdate != nil:
				used = u.UsageUpdate.Used
			}
		}
		if want := []string{"read_2", "edit_2"}; !reflect.DeepEqual(ids, want) {
			t.Errorf("tool call ids = %q, want %q", ids, want)
		}
		if want := 2000 + len(fullPrompt) + len(second); used != want {
			t.Errorf("used = %d, want %d", used, want)
		}
	})
}

func TestFullTurnRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &testClient{answer: func(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
			return selectOption("reject-once"), nil
		}}
		h := newHarness(t, context.Background(), Options{}, client)
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))
		stop, err := h.prompt(sid, fullPrompt)
		if err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("prompt = %q, %v; want end_turn", stop, err)
		}
		us := h.client.sessionUpdates(sid)[before:]
		if got := kinds(us); !reflect.DeepEqual(got, fullTurnKinds) {
			t.Fatalf("update kinds:\n got %q\nwant %q", got, fullTurnKinds)
		}
		failed := us[11].ToolCallUpdate
		if failed.ToolCallId != "edit_1" || *failed.Status != acp.ToolCallStatusFailed {
			t.Errorf("edit update = %+v, want failed", failed)
		}
		if raw, _ := json.Marshal(failed.RawOutput); string(raw) != `{"applied":false,"reason":"rejected by the user"}` {
			t.Errorf("edit rawOutput = %s", raw)
		}
		if got, want := messageText(us), "You said: "+fullPrompt+ClosingNotApplied; got != want {
			t.Errorf("message text = %q, want %q", got, want)
		}
	})
}

func TestPermissionErrorFailsEdit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &testClient{answer: func(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
			return acp.RequestPermissionResponse{}, acp.NewInternalError(map[string]any{"error": "boom"})
		}}
		h := newHarness(t, context.Background(), Options{}, client)
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))
		if stop, err := h.prompt(sid, fullPrompt); err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("prompt = %q, %v; want end_turn", stop, err)
		}
		failed := h.client.sessionUpdates(sid)[before:][11].ToolCallUpdate
		if failed == nil || *failed.Status != acp.ToolCallStatusFailed {
			t.Fatalf("edit update = %+v, want failed", failed)
		}
		if reason, _ := failed.RawOutput.(map[string]any)["reason"].(string); !strings.Contains(reason, "permission request failed") {
			t.Errorf("reason = %q", reason)
		}
	})
}

func TestUnknownOptionFailsEdit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &testClient{answer: func(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
			return selectOption("allow-everything"), nil
		}}
		h := newHarness(t, context.Background(), Options{}, client)
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))
		if _, err := h.prompt(sid, fullPrompt); err != nil {
			t.Fatal(err)
		}
		failed := h.client.sessionUpdates(sid)[before:][11].ToolCallUpdate
		if failed == nil || *failed.Status != acp.ToolCallStatusFailed {
			t.Fatalf("edit update = %+v, want failed", failed)
		}
	})
}

func TestAllowAlwaysAllows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &testClient{answer: func(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
			return selectOption("allow-always"), nil
		}}
		h := newHarness(t, context.Background(), Options{}, client)
		sid := h.newSession()
		if _, err := h.prompt(sid, fullPrompt); err != nil {
			t.Fatal(err)
		}
		if got := messageText(h.client.sessionUpdates(sid)); !strings.HasSuffix(got, ClosingApplied) {
			t.Errorf("message text = %q, want the applied closing", got)
		}
	})
}

func TestQuickPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{Delay: time.Second}, &testClient{})
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))
		stop, err := h.prompt(sid, "  quick \n")
		if err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("prompt = %q, %v; want end_turn", stop, err)
		}
		us := h.client.sessionUpdates(sid)[before:]
		want := []string{"agent_thought_chunk", "agent_message_chunk", "agent_message_chunk"}
		if got := kinds(us); !reflect.DeepEqual(got, want) {
			t.Fatalf("update kinds = %q, want %q", got, want)
		}
		if got := messageText(us); got != "You said:   quick \n" {
			t.Errorf("message text = %q", got)
		}
		if n := len(h.client.permissions()); n != 0 {
			t.Errorf("%d permission requests, want 0", n)
		}
	})
}

func TestCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		sid := h.newSession()
		for _, tc := range []struct{ prompt, want string }{
			{"/echo hello  world", "hello  world"},
			{"/echo", "(nothing to echo)"},
			{"/help", helpText},
		} {
			before := len(h.client.sessionUpdates(sid))
			if stop, err := h.prompt(sid, tc.prompt); err != nil || stop != acp.StopReasonEndTurn {
				t.Fatalf("%q: prompt = %q, %v", tc.prompt, stop, err)
			}
			us := h.client.sessionUpdates(sid)[before:]
			if len(us) != 1 || messageText(us) != tc.want {
				t.Errorf("%q: updates %q, text %q; want one chunk %q", tc.prompt, kinds(us), messageText(us), tc.want)
			}
		}
	})
}

func TestPromptUnknownSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		h.newSession()
		if _, err := h.prompt("demo_nope", "hi"); requestCode(err) != -32002 {
			t.Errorf("prompt on unknown session: err = %v, want code -32002", err)
		}
	})
}
