package demo

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/coder/acp-go-sdk"
)

func TestInitialize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		resp, err := h.conn.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtocolVersion != 1 {
			t.Errorf("protocolVersion = %d", resp.ProtocolVersion)
		}
		if i := resp.AgentInfo; i == nil || i.Name != "demo" || i.Title == nil || *i.Title != "Demo agent" || i.Version != "0.1.0" {
			t.Errorf("agentInfo = %+v", i)
		}
		c := resp.AgentCapabilities
		if !c.LoadSession || c.PromptCapabilities.Image || c.PromptCapabilities.Audio || !c.PromptCapabilities.EmbeddedContext {
			t.Errorf("agentCapabilities = %+v", c)
		}
		if !strings.Contains(h.wire.String(), `"authMethods":[]`) {
			t.Errorf("wire has no empty authMethods array: %s", h.wire.String())
		}
	})
}

func TestNewSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		if _, err := h.conn.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
			t.Fatal(err)
		}
		resp, err := h.conn.NewSession(context.Background(), acp.NewSessionRequest{Cwd: testCwd, McpServers: []acp.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(resp.SessionId), "demo_") || len(resp.SessionId) != len("demo_")+16 {
			t.Errorf("sessionId = %q", resp.SessionId)
		}
		m := resp.Modes
		if m == nil || m.CurrentModeId != "default" || len(m.AvailableModes) != 2 ||
			m.AvailableModes[0].Id != "default" || m.AvailableModes[0].Name != "Default" ||
			m.AvailableModes[1].Id != "plan" || m.AvailableModes[1].Name != "Plan only" {
			t.Errorf("modes = %+v", m)
		}
		checkStyle(t, resp.ConfigOptions, "plain")

		synctest.Wait()
		us := h.client.sessionUpdates(resp.SessionId)
		if len(us) != 1 || us[0].AvailableCommandsUpdate == nil {
			t.Fatalf("updates after session/new = %q, want one available_commands_update", kinds(us))
		}
		var names []string
		for _, c := range us[0].AvailableCommandsUpdate.AvailableCommands {
			names = append(names, c.Name)
		}
		if want := []string{"help", "echo"}; !reflect.DeepEqual(names, want) {
			t.Errorf("commands = %q, want %q", names, want)
		}

		// On the wire, the session/new response comes first: before it the
		// client cannot know the session id.
		var order []string
		for _, line := range strings.Split(strings.TrimSpace(h.wire.String()), "\n") {
			switch {
			case strings.Contains(line, `"result":{"configOptions"`):
				order = append(order, "session/new response")
			case strings.Contains(line, `"available_commands_update"`):
				order = append(order, "available_commands_update")
			}
		}
		if want := []string{"session/new response", "available_commands_update"}; !reflect.DeepEqual(order, want) {
			t.Errorf("wire order = %q, want %q", order, want)
		}
	})
}

func TestNewSessionRejectsRelativeCwd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		_, err := h.conn.NewSession(context.Background(), acp.NewSessionRequest{Cwd: "project", McpServers: []acp.McpServer{}})
		if requestCode(err) != -32602 {
			t.Errorf("err = %v, want code -32602", err)
		}
	})
}

// checkStyle asserts the config option list: the one "style" select.
func checkStyle(t *testing.T, opts []acp.SessionConfigOption, current string) {
	t.Helper()
	if len(opts) != 1 || opts[0].Select == nil {
		t.Fatalf("configOptions = %+v, want one select", opts)
	}
	s := opts[0].Select
	if s.Id != "style" || s.Name != "Answer style" || s.Type != "select" || string(s.CurrentValue) != current || s.Options.Ungrouped == nil {
		t.Fatalf("style option = %+v (current want %q)", s, current)
	}
	var got []string
	for _, o := range *s.Options.Ungrouped {
		got = append(got, string(o.Value)+"/"+o.Name)
	}
	if want := []string{"plain/Plain", "fancy/Fancy"}; !reflect.DeepEqual(got, want) {
		t.Errorf("style values = %q, want %q", got, want)
	}
}

func TestSetMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))
		ctx := context.Background()

		if _, err := h.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sid, ModeId: "plan"}); err != nil {
			t.Fatal(err)
		}
		// No synctest.Wait: the update precedes the reply, so the SDK has
		// delivered it when the call returns.
		us := h.client.sessionUpdates(sid)[before:]
		if len(us) != 1 || us[0].CurrentModeUpdate == nil || us[0].CurrentModeUpdate.CurrentModeId != "plan" {
			t.Fatalf("updates = %q, want current_mode_update plan", kinds(us))
		}
		if !strings.Contains(h.wire.String(), `"result":{}`) {
			t.Errorf("set_mode did not answer {}")
		}

		if _, err := h.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sid, ModeId: "yolo"}); requestCode(err) != -32602 {
			t.Errorf("unknown mode: err = %v, want -32602", err)
		}
		if _, err := h.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: "demo_nope", ModeId: "plan"}); requestCode(err) != -32002 {
			t.Errorf("unknown session: err = %v, want -32002", err)
		}
		if n := len(h.client.sessionUpdates(sid)) - before; n != 1 {
			t.Errorf("%d updates, want only the one for the accepted change", n)
		}
	})
}

func TestSetConfigOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		sid := h.newSession()
		before := len(h.client.sessionUpdates(sid))
		ctx := context.Background()
		set := func(sid acp.SessionId, id, value string) (acp.SetSessionConfigOptionResponse, error) {
			return h.conn.SetSessionConfigOption(ctx, acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{
				SessionId: sid, ConfigId: acp.SessionConfigId(id), Value: acp.SessionConfigValueId(value),
			}})
		}

		resp, err := set(sid, "style", "fancy")
		if err != nil {
			t.Fatal(err)
		}
		checkStyle(t, resp.ConfigOptions, "fancy")
		us := h.client.sessionUpdates(sid)[before:]
		if len(us) != 1 || us[0].ConfigOptionUpdate == nil {
			t.Fatalf("updates = %q, want one config_option_update", kinds(us))
		}
		checkStyle(t, us[0].ConfigOptionUpdate.ConfigOptions, "fancy")

		for _, tc := range []struct {
			sid       acp.SessionId
			id, value string
			code      int
		}{
			{sid, "style", "loud", -32602},
			{sid, "model", "big", -32602},
			{"demo_nope", "style", "plain", -32002},
		} {
			if _, err := set(tc.sid, tc.id, tc.value); requestCode(err) != tc.code {
				t.Errorf("set %s=%s on %s: err = %v, want code %d", tc.id, tc.value, tc.sid, err, tc.code)
			}
		}
		_, err = h.conn.SetSessionConfigOption(ctx, acp.SetSessionConfigOptionRequest{Boolean: &acp.SetSessionConfigOptionBoolean{
			SessionId: sid, ConfigId: "style", Type: "boolean", Value: true,
		}})
		if requestCode(err) != -32602 {
			t.Errorf("boolean value: err = %v, want -32602", err)
		}
		if n := len(h.client.sessionUpdates(sid)) - before; n != 1 {
			t.Errorf("%d updates, want only the one for the accepted change", n)
		}
	})
}

func TestNoZeroValueUnionsOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, context.Background(), Options{}, &testClient{})
		sid := h.newSession()
		if _, err := h.prompt(sid, fullPrompt); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(h.wire.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("bad line %q: %v", line, err)
			}
			if strings.Contains(line, ":null") {
				t.Errorf("null on the wire: %s", line)
			}
		}
	})
}
