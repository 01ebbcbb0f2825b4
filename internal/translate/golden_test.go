package translate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// step is one call a session makes on its Context. Exactly one field is set.
type step struct {
	Begin      string            // BeginTurn(turnID)
	Update     string            // Update(params) from the agent
	Prompt     []json.RawMessage // UserPrompt(PromptTurn, blocks)
	PromptTurn string
	End        *string // EndTurn(reason)
	Note       [2]string
	Permission string // PermissionToolCall(toolCall)
}

func end(reason string) step { return step{End: &reason} }

// scenario runs steps and records every output, then the snapshot and the replay, as one golden document.
// It also logs the frames a session would log and checks that a Context restored from them is the same.
// Every params object translate produces is validated against the schema: forwarded agent updates against
// schema.unstable.json, what the gateway originates (prompts, closers, replay) against schema.json.
func runScenario(t *testing.T, name string, cfg Config, steps []step) {
	t.Helper()
	c := NewContext(cfg)
	type record struct {
		Step string            `json:"step"`
		Out  []json.RawMessage `json:"out,omitempty"`
		Note string            `json:"note,omitempty"`
	}
	var recs []record
	log := &sessionLog{t: t, cfg: cfg}
	for _, s := range steps {
		log.before(s)
		switch {
		case s.Begin != "":
			c.BeginTurn(s.Begin)
			log.begin(s.Begin)
			recs = append(recs, record{Step: "BeginTurn " + s.Begin})
		case s.Update != "":
			u := mustUpdate(t, c, s.Update)
			log.update(u.Params, u.Truncated)
			forwardedValid(t, u.Params)
			r := record{Step: "Update", Out: []json.RawMessage{u.Params}}
			var notes []string
			if u.Truncated {
				notes = append(notes, "truncated")
			}
			if u.Text != "" {
				notes = append(notes, "text="+u.Text)
			}
			r.Note = strings.Join(notes, " ")
			recs = append(recs, r)
		case s.Prompt != nil:
			var out []json.RawMessage
			for _, p := range c.UserPrompt(s.PromptTurn, s.Prompt) {
				originatedValid(t, p)
				log.update(p, false)
				out = append(out, p)
			}
			recs = append(recs, record{Step: "UserPrompt " + s.PromptTurn, Out: out})
		case s.End != nil:
			var out []json.RawMessage
			for _, p := range c.EndTurn(*s.End) {
				originatedValid(t, p)
				out = append(out, p)
			}
			log.end(*s.End, toBytes(out))
			recs = append(recs, record{Step: "EndTurn " + *s.End, Out: out})
		case s.Note[0] != "":
			c.Note(s.Note[0], []byte(s.Note[1]))
			log.note(s.Note[0], s.Note[1])
			recs = append(recs, record{Step: "Note " + s.Note[0] + " " + s.Note[1]})
		case s.Permission != "":
			p := c.PermissionToolCall([]byte(s.Permission))
			log.permission(p)
			recs = append(recs, record{Step: "PermissionToolCall", Out: []json.RawMessage{p}})
		}
	}
	snap := c.Snapshot(42)
	if !json.Valid(snap) {
		t.Fatalf("invalid snapshot %s", snap)
	}
	var replay []json.RawMessage
	for _, p := range c.Replay() {
		originatedValidOrUnstable(t, p)
		replay = append(replay, p)
	}
	doc := struct {
		Steps    []record          `json:"steps"`
		Snapshot json.RawMessage   `json:"snapshot"`
		Replay   []json.RawMessage `json:"replay"`
	}{recs, snap, replay}
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	log.checkRestored(c) // last: it feeds both Contexts more updates
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/translate -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (run with -update and review the diff):\n%s", path, got)
	}
}

// originatedValidOrUnstable validates replayed updates: stable where the schema has the variant, unstable
// otherwise (a replayed tool call may carry whatever the agent sent, which only the unstable schema knows).
func originatedValidOrUnstable(t *testing.T, p []byte) {
	t.Helper()
	forwardedValid(t, p)
}

func raws(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

// The SDK example agent's turn (acp-protocol.md §3), ids and all: no messageIds, call ids reused per turn,
// a permission request that carries more than the tool_call, the rejected call left pending.
func TestGoldenExampleAgentTurns(t *testing.T) {
	call2 := `{"toolCallId":"call_2","title":"Modifying critical configuration file","kind":"edit","status":"pending","locations":[{"path":"/home/user/project/config.json"}],"rawInput":{"path":"/home/user/project/config.json","content":"{\"database\": {\"host\": \"new-host\"}}"}}`
	turn := func(id string, allow bool) []step {
		s := []step{
			{Begin: id},
			{Note: [2]string{"_gateway/turn_started", `{"turnId":"` + id + `"}`}},
			{PromptTurn: id, Prompt: raws(`{"type":"text","text":"Fix the config"}`)},
			{Update: chunk("agent_message_chunk", "ACP Go Example Agent — demo only (no AI model).")},
			{Update: chunk("agent_message_chunk", "I'll help you with that. Let me start by reading some files to understand the current situation.")},
			{Update: `{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Reading project files","kind":"read","status":"pending","locations":[{"path":"/project/README.md"}],"rawInput":{"path":"/project/README.md"}}}`},
			{Update: `{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"# My Project\n\nThis is a sample project..."}}],"rawOutput":{"content":"# My Project\n\nThis is a sample project..."}}}`},
			{Update: chunk("agent_message_chunk", " Now I understand the project structure. I need to make some changes to improve it.")},
			{Update: `{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call","toolCallId":"call_2","title":"Modifying critical configuration file","kind":"edit","status":"pending","locations":[{"path":"/project/config.json"}],"rawInput":{"path":"/project/config.json","content":"{\"database\": {\"host\": \"new-host\"}}"}}}`},
			{Permission: call2},
		}
		if allow {
			s = append(s,
				step{Update: `{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_2","status":"completed","title":"Modifying critical configuration file","rawOutput":{"success":true,"message":"Configuration updated"}}}`},
				step{Update: chunk("agent_message_chunk", " Perfect! I've successfully updated the configuration. The changes have been applied.")})
		} else {
			s = append(s, step{Update: chunk("agent_message_chunk", " I understand you prefer not to make that change. I'll skip the configuration update.")})
		}
		return append(s, end(""), step{Note: [2]string{"_gateway/turn_ended", `{"turnId":"` + id + `","stopReason":"end_turn"}`}})
	}
	steps := append(turn("turn-1", true), turn("turn-2", false)...)
	runScenario(t, "example_agent_turns", Config{SessionID: "gw-1", Cwd: "/project"}, steps)
}

// A cancelled turn: open tool calls are closed with the reason, the partial answer and the thought stay in
// the snapshot but not in the replay, the completed call's final state is replayed.
func TestGoldenCancelledTurn(t *testing.T) {
	steps := []step{
		{Begin: "t1"},
		{PromptTurn: "t1", Prompt: raws(`{"type":"text","text":"Say hi"}`)},
		{Update: chunk("agent_message_chunk", "Hi!")},
		end(""),
		{Note: [2]string{"_gateway/turn_ended", `{"turnId":"t1","stopReason":"end_turn"}`}},
		{Begin: "t2"},
		{PromptTurn: "t2", Prompt: raws(`{"type":"text","text":"Refactor everything"}`, `{"type":"resource_link","uri":"file:///p/main.go","name":"main.go"}`)},
		{Update: chunk("agent_thought_chunk", "The user wants a refactor.")},
		{Update: chunk("agent_message_chunk", "Starting with")},
		{Update: chunk("agent_message_chunk", " main.go")},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read main.go","kind":"read","status":"in_progress"}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"r1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"package main"}}]}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"e1","title":"Edit main.go","kind":"edit","status":"pending","locations":[{"path":"/p/main.go"}],"_meta":{"claudeCode":{"toolName":"Edit"}}}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"e1","status":"in_progress","content":[{"type":"diff","path":"/p/main.go","oldText":"a","newText":"b"}]}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"x1","title":"Run tests","kind":"execute"}}`},
		{Update: chunk("agent_message_chunk", "Now I will")},
		end("cancelled"),
		{Note: [2]string{"_gateway/turn_ended", `{"turnId":"t2","stopReason":"cancelled"}`}},
	}
	runScenario(t, "cancelled_turn", Config{SessionID: "gw-2"}, steps)
}

// A failed turn (the agent call errored): its answer is left out of the replay too.
func TestGoldenFailedTurn(t *testing.T) {
	steps := []step{
		{Begin: "t1"},
		{PromptTurn: "t1", Prompt: raws(`{"type":"text","text":"hi"}`)},
		{Update: chunk("agent_message_chunk", "Partial ans")},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"ls","kind":"execute","status":"in_progress"}}`},
		end("agent_error"),
		{Note: [2]string{"_gateway/turn_ended", `{"turnId":"t1","stopReason":"end_turn","error":{"code":-32603,"message":"boom"}}`}},
	}
	runScenario(t, "failed_turn", Config{SessionID: "gw-3"}, steps)
}

// Session-level state folded into the snapshot, and the variants the schema does not know.
func TestGoldenSessionState(t *testing.T) {
	steps := []step{
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"context","description":"Show context"}]}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"config_option_update","configOptions":[{"id":"mode","name":"Mode","type":"select","currentValue":"plan","options":[{"value":"plan","name":"Plan"}]}]}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"session_info_update","title":"First title","updatedAt":"2025-01-01T00:00:00Z"}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"session_info_update","title":null,"_meta":{"x":1}}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.01,"currency":"USD"}}}`},
		{Begin: "t1"},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"plan","entries":[{"content":"Read","priority":"high","status":"completed"},{"content":"Write","priority":"low","status":"pending"}]}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}}}`},
		{Update: chunk("agent_message_chunk", "That was a picture. ")},
		{Update: chunk("agent_message_chunk", "Nice, right?")},
		end(""),
	}
	runScenario(t, "session_state", Config{SessionID: "gw-4"}, steps)
}

// Bounds and redaction together: truncation first, then redaction, including a secret that straddles the
// cut and secrets in titles; message text is never redacted.
func TestGoldenBoundAndRedact(t *testing.T) {
	long := strings.Repeat("line of build output, nothing secret here\n", 20)
	longJSON, _ := json.Marshal(long + "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789")
	steps := []step{
		{Begin: "t"},
		{Update: chunk("agent_message_chunk", "My key is sk-abcdefghijklmnopqrstuvwxyz and I say it in text.")},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"curl -H 'Authorization: Bearer abcdefghijklmnop1234' https://x","kind":"execute","status":"in_progress","rawInput":{"command":"curl","password":"hunter2 with spaces","env":{"GITHUB_TOKEN":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","rawOutput":{"stdout":` + string(longJSON) + `,"exit":0},"content":[{"type":"content","content":{"type":"text","text":"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\naws AKIAIOSFODNN7EXAMPLE slack xoxb-1234567890-abcdef"}}]}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"d","title":"cat id_rsa","kind":"read","status":"completed","rawOutput":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn` + strings.Repeat("NhAAAAAwEAAQAAAYEAx", 40) + `\n-----END OPENSSH PRIVATE KEY-----\n"}}`},
		{Update: `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"e","title":"many items","kind":"search","status":"completed","content":[` + strings.Repeat(`{"type":"content","content":{"type":"text","text":"match"}},`, 40) + `{"type":"diff","path":"/x","newText":"y"}]}}`},
		end(""),
	}
	runScenario(t, "bound_and_redact", Config{SessionID: "gw-5", MaxFieldBytes: 300, Redact: true}, steps)
}
