// Command testagent is a deliberately misbehaving ACP agent for the gateway's delivery and fault tests. It
// speaks ACP over stdio with acp-go-sdk; -mode chooses how each prompt turn behaves:
//
//	stubborn  sends an in_progress tool_call and a message chunk, starts a child process (a sleeper) in its
//	          own process group (so a test can check the whole group is killed), then ignores session/cancel
//	          and never answers the prompt.
//	garbage   prints non-JSON lines on stdout between its updates (one of them 1 MiB long), then ends the
//	          turn normally (end_turn).
//	huge      sends one chunk, then prints a single 11 MiB line (a syntactically valid session/update) and
//	          blocks; the gateway's reader cannot take a line that long.
//	exit      sends a tool_call and a chunk, then exits with status 3 in the middle of the turn.
//	flood     the prompt text is "N SIZE": sends N agent_message_chunks of SIZE bytes each, then end_turn.
//	perms     asks permission for a read-kind tool call, then for an edit-kind one, and reports each
//	          outcome as a completed or failed tool_call_update. Option ids are chosen to mislead: the option
//	          with id "allow" is of kind reject_once, so a policy that picks by id instead of kind is caught.
//	noise     the prompt text is "N": prints N short non-JSON lines on stdout, then ends the turn (end_turn).
//	deaf      stops reading its stdin once it has answered session/new: the gateway's next writes fill the
//	          pipe and block.
//	escape    starts a sleeper in a session of its own (setsid: outside the agent's process group), prints
//	          "testagent: escaped <pid>" on stderr and in a message chunk, then ends the turn (end_turn) — or,
//	          when the prompt text is "escape and exit", exits at once, leaving the process behind; with
//	          "escape scrubbed and exit" the process also gets an empty environment (no gateway marker).
//	doublefork like escape, but the usual daemon double fork: a middle process starts the setsid sleeper
//	          and exits, so the sleeper is re-parented (to the nearest subreaper) before anyone can record it.
//	raw       writes hand-made session/update lines whose bytes Go's encoder would never produce (raw '<',
//	          '&', U+2028, unknown fields, a null), for byte-fidelity checks, then ends the turn.
//	startfail answers session/new with a JSON-RPC error whose data says what is wrong (and holds a secret the
//	          gateway must redact), as codex does without an API key.
//	rpcerrors starts normally; session/set_mode and every prompt answer a JSON-RPC error with data.
//	initexit  prints a line on stderr and exits with status 4 on initialize.
//	mcp       reports the MCP servers session/new (or session/load, session/resume) gave it, and lists the
//	          tools of its stdio ones (mcp.go).
//	term      runs the prompt's steps against the client's terminals and files (terminal.go).
//	fs        runs the prompt's steps against the client's fs/* — FIFOs, sparse files, hard links, many
//	          reads at once (fs.go).
//	badutf8   writes invalid UTF-8 (raw FF FE) inside the strings of a message chunk, a tool call and a
//	          permission request, in a non-JSON stdout line and on stderr, then ends the turn.
//	elicit    asks the client a question with elicitation/create (form, or url when the prompt text is
//	          "url") and reports the answer in a message chunk (elicit.go).
//	echo      answers each prompt with one message chunk describing the blocks it received (type, mime type,
//	          byte length), the prompt's _meta traceparent and tracestate, and the clientCapabilities of
//	          initialize (echo.go), then ends the turn. A session opened with additionalDirectories (-additional-dirs
//	          advertises them) gets a line "additionalDirectories [a b]" before the last one.
//	login     offers terminal auth methods and answers session/new with auth_required until their login
//	          command (-login-code, -login-oauth) wrote a credential under $HOME (login.go).
//	usage     the prompt text is JSON {"cost":{amount,currency}?,"usage":{inputTokens,…}?}: sends a usage_update
//	          with that (cumulative) cost and ends the turn with that token usage (usage.go).
//	transcript the prompt text is "N": writes N agent messages (Markdown), each followed by a completed edit tool
//	          call with a diff, then ends the turn, so a test builds a long session quickly; "hold N" puts an
//	          in_progress tool call before them that asks permission and completes after them (transcript.go).
//
// -hang-set-mode makes session/set_mode wait until it is cancelled ($/cancel_request), and the echo mode's
// next prompt wait for that and then say "set_mode cancelled" on a line of its own.
//
// -fork and -delete advertise and answer session/fork and session/delete; -record DIR makes both leave a
// file in DIR, session ids unique across processes, and echo turns name their session (fork.go).
//
// Taking a session back: initialize advertises loadSession unless -no-load; -resume-only advertises
// sessionCapabilities.resume instead. session/load replays a made-up earlier conversation of the session
// (a user_message_chunk, an agent_message_chunk and a completed tool_call) as session/update notifications
// before it answers, the way real agents replay their history; session/resume replays nothing. Both answer
// with one mode, "loaded", so a test sees modes come from their answer. -fail-load makes both answer a
// JSON-RPC error instead (after the replay). -after-load writes an available_commands_update (command
// "after-load") right behind the session/load answer, with nothing between them on the wire. -load-gate
// PATH makes session/load first read PATH, a FIFO: it waits until the test opens the FIFO for writing.
//
// -login KEY makes the agent demand a login: auth methods of each kind the gateway serves, and
// auth_required on session/new, load and resume until it has one (login.go).
//
// -protocol-version N makes initialize answer protocolVersion N instead of the SDK's (1), as an agent that
// speaks only ACP v2 answers 2 whatever the client asked for.
//
// -init NAME makes initialize answer with distinctive values a test can recognise: agentInfo {name: NAME,
// title: "Test agent NAME"}, every promptCapability true, loadSession true and one auth method "key-NAME".
// -pid-dir DIR writes an empty file named after the agent's pid into DIR at start, and -init-child makes
// initialize also start a sleeper (see below) in the agent's process group (its pid goes into DIR too), so a test can
// check that stopping the agent leaves nothing behind.
//
// Two modes speak the gateway's native event dialect (docs/events.md) instead of ACP:
//
//	events-escape  on each prompt, double-forks a setsid sleeper as doublefork does, prints its pid in a
//	               text_delta ("escaped <pid>") and on stderr, then done.
//	events-deaf    never reads its stdin: the gateway's writes fill the pipe and block.
//
// A sleeper, the process some modes start, is this binary again (-sleep N), so no mode needs PATH.
//
// It is test scaffolding, not part of the gateway.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// lockedWriter lets the agent put raw lines on stdout between the SDK's messages without splitting either:
// the SDK writes each message with a single Write call.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
	// tail is written right behind the next message that contains tailAfter (-after-load), in the same
	// critical section, so nothing comes between them on the wire. Guarded by mu.
	tail, tailAfter []byte
	// rewriteOld is replaced by rewriteNew in the next message that holds it (-login: a "secret": false the
	// SDK's omitempty would drop). Guarded by mu.
	rewriteOld, rewriteNew []byte
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rewriteOld != nil && bytes.Contains(p, l.rewriteOld) {
		if _, err := l.w.Write(bytes.Replace(p, l.rewriteOld, l.rewriteNew, 1)); err != nil {
			return 0, err
		}
		l.rewriteOld, l.rewriteNew = nil, nil
		return len(p), nil
	}
	n, err := l.w.Write(p)
	if err == nil && l.tail != nil && bytes.Contains(p, l.tailAfter) {
		_, err = l.w.Write(l.tail)
		l.tail, l.tailAfter = nil, nil
	}
	return n, err
}

// rewriteOnce replaces old by new in the next message that holds old.
func (l *lockedWriter) rewriteOnce(old, new string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rewriteOld, l.rewriteNew = []byte(old), []byte(new)
}

// writeAfter makes line follow the next message that contains marker.
func (l *lockedWriter) writeAfter(marker, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tail, l.tailAfter = []byte(line+"\n"), []byte(marker)
}

type agent struct {
	acp.Agent    // nil: methods the gateway never calls panic, which a test would notice
	mode         string
	initName     string                            // -init
	pidDir       string                            // -pid-dir
	initChild    bool                              // -init-child
	noLoad       bool                              // -no-load
	resumeOnly   bool                              // -resume-only
	failLoad     bool                              // -fail-load
	mcpCaps      string                            // -mcp-caps
	mcp          map[acp.SessionId][]acp.McpServer // Guarded by mu; what session/new, load or resume gave (mcp mode).
	afterLoad    bool                              // -after-load
	addDirs      bool                              // -additional-dirs
	protoVersion acp.ProtocolVersion               // -protocol-version
	hangMode     bool                              // -hang-set-mode
	modeGone     chan struct{}                     // -hang-set-mode: one value per session/set_mode cancelled
	dirs         map[acp.SessionId][]string        // Guarded by mu; the additionalDirectories a session was opened with.
	loadGate     string                            // -load-gate
	login        loginState                        // -login (login.go)
	out          *lockedWriter
	conn         *acp.AgentSideConnection
	deaf         chan struct{} // closed when the agent stops reading stdin (deaf mode)
	mu           sync.Mutex
	n            int                             // Guarded by mu.
	written      int                             // Guarded by mu. Messages the transcript mode wrote so far (their numbers go on across turns).
	clientCaps   string                          // Guarded by mu. The clientCapabilities of initialize, as JSON (echo mode).
	canFork      bool                            // -fork
	canDelete    bool                            // -delete
	recordDir    string                          // -record
	forkedFrom   map[acp.SessionId]acp.SessionId // Guarded by mu; a forked session's source (fork.go).
}

// deafReader is the agent's stdin: once deaf is closed, reads block forever, so the pipe fills up.
type deafReader struct {
	r    io.Reader
	deaf <-chan struct{}
}

func (d deafReader) Read(p []byte) (int, error) {
	select {
	case <-d.deaf:
		hang()
	default:
	}
	return d.r.Read(p)
}

// errData is the data of the JSON-RPC errors of the startfail and rpcerrors modes.
const errData = "OPENAI_API_KEY is not set; the old one was sk-testagentsecret0123456789abcdef"

func (a *agent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	if a.mode == "initexit" {
		fmt.Fprintln(os.Stderr, "testagent: no credentials found in ~/.testagent")
		os.Exit(4)
	}
	a.recordClientCaps(p.ClientCapabilities)
	if a.mode == "login" {
		return acp.InitializeResponse{ProtocolVersion: a.protoVersion, AgentInfo: &acp.Implementation{Name: "testagent-login", Version: "0"},
			AuthMethods: loginMethods()}, nil
	}
	if a.initChild {
		child := sleeper(1000)
		if err := child.Start(); err != nil {
			return acp.InitializeResponse{}, err
		}
		writePid(a.pidDir, child.Process.Pid)
	}
	if n := a.initName; n != "" {
		return acp.InitializeResponse{
			ProtocolVersion: acp.ProtocolVersionNumber,
			AgentCapabilities: acp.AgentCapabilities{
				LoadSession:        true,
				PromptCapabilities: acp.PromptCapabilities{Image: true, Audio: true, EmbeddedContext: true},
			},
			AgentInfo:   &acp.Implementation{Name: n, Title: acp.Ptr("Test agent " + n), Version: "0"},
			AuthMethods: []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{Id: "key-" + n, Name: "Key of " + n}}},
		}, nil
	}
	caps := acp.AgentCapabilities{LoadSession: !a.noLoad && !a.resumeOnly, McpCapabilities: acp.McpCapabilities{
		Http: strings.Contains(a.mcpCaps, "http"), Sse: strings.Contains(a.mcpCaps, "sse")}}
	if a.resumeOnly {
		caps.SessionCapabilities.Resume = &acp.SessionResumeCapabilities{}
	}
	if a.addDirs {
		caps.SessionCapabilities.AdditionalDirectories = &acp.SessionAdditionalDirectoriesCapabilities{}
	}
	if a.canFork {
		caps.SessionCapabilities.Fork = &acp.SessionForkCapabilities{}
	}
	if a.canDelete {
		caps.SessionCapabilities.Delete = &acp.SessionDeleteCapabilities{}
	}
	methods := []acp.AuthMethod{}
	if a.login.key != "" {
		caps.Auth.Logout = &acp.LogoutCapabilities{}
		methods = loginAuthMethods()
		a.out.rewriteOnce(`"name":"TEST_REGION"`, `"name":"TEST_REGION","secret":false`)
	}
	return acp.InitializeResponse{
		ProtocolVersion:   a.protoVersion,
		AgentCapabilities: caps,
		AgentInfo:         &acp.Implementation{Name: "testagent-" + a.mode, Version: "0"},
		AuthMethods:       methods,
	}, nil
}

// authMethod is the only method the agent accepts; any other is invalid params, as real agents answer.
const authMethod = "testagent-login"

func (a *agent) Authenticate(ctx context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	if a.login.authenticateLogin(string(p.MethodId)) {
		return acp.AuthenticateResponse{}, nil
	}
	if p.MethodId != authMethod {
		return acp.AuthenticateResponse{}, acp.NewInvalidParams(map[string]string{"methodId": "unknown auth method " + p.MethodId})
	}
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	a.mu.Lock()
	a.n++
	id := a.sessionID(a.n)
	a.mu.Unlock()
	if err := a.login.checkLogin(); err != nil {
		return acp.NewSessionResponse{}, err
	}
	if a.login.key != "" {
		// Announced before the answer: the gateway reads an update between the authenticate it replays and
		// the session/new it retries (loginkey.go).
		cmds := acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: []acp.AvailableCommand{{Name: "whoami", Description: "say who logged in"}}}}
		if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: acp.SessionId(id), Update: cmds}); err != nil {
			return acp.NewSessionResponse{}, err
		}
	}
	a.recordMCP(acp.SessionId(id), p.McpServers)
	a.recordDirs(acp.SessionId(id), p.AdditionalDirectories)
	if a.mode == "startfail" {
		return acp.NewSessionResponse{}, acp.NewInternalError(errData)
	}
	if a.mode == "login" && !loggedIn() {
		return acp.NewSessionResponse{}, acp.NewAuthRequired(map[string]string{"reason": "log in first: no credential under $HOME"})
	}
	if a.mode == "mcp" {
		if err := refuseMCP(a.out, p.McpServers); err != nil {
			return acp.NewSessionResponse{}, err
		}
	}
	if a.mode == "deaf" && a.n == 1 {
		close(a.deaf) // the answer still goes out; nothing more is read
	}
	return acp.NewSessionResponse{SessionId: acp.SessionId(id)}, nil
}

// recordMCP keeps the MCP servers session/new, session/load or session/resume gave a session (the mcp mode
// reports them).
func (a *agent) recordMCP(sid acp.SessionId, servers []acp.McpServer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mcp == nil {
		a.mcp = map[acp.SessionId][]acp.McpServer{}
	}
	a.mcp[sid] = servers
}

// loadedModes is the mode state session/load and session/resume answer with.
func loadedModes() *acp.SessionModeState {
	return &acp.SessionModeState{CurrentModeId: "loaded", AvailableModes: []acp.SessionMode{{Id: "loaded", Name: "Loaded"}}}
}

// LoadSession implements acp.AgentLoader: it replays an earlier conversation, then answers.
func (a *agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	if err := a.login.checkLogin(); err != nil {
		return acp.LoadSessionResponse{}, err
	}
	sid := p.SessionId
	a.recordMCP(sid, p.McpServers)
	a.recordDirs(sid, p.AdditionalDirectories)
	if a.loadGate != "" {
		_, _ = os.ReadFile(a.loadGate) // a FIFO: blocks until the test opens it for writing and closes it
	}
	if a.afterLoad {
		a.out.writeAfter(`"currentModeId":"loaded"`, afterLoadUpdate(sid))
	}
	replay := []acp.SessionUpdate{
		acp.UpdateUserMessageText("earlier prompt"),
		acp.UpdateAgentMessageText("earlier answer of " + string(sid)),
		acp.StartToolCall("replayed-1", "Read earlier.txt", acp.WithStartKind(acp.ToolKindRead), acp.WithStartStatus(acp.ToolCallStatusCompleted)),
	}
	for _, u := range replay {
		if err := a.update(ctx, sid, u); err != nil {
			return acp.LoadSessionResponse{}, err
		}
	}
	if a.failLoad {
		return acp.LoadSessionResponse{}, acp.NewInternalError(map[string]string{"error": "no such session " + string(sid)})
	}
	return acp.LoadSessionResponse{Modes: loadedModes()}, nil
}

// afterLoadUpdate is the -after-load notification: an available_commands_update, as real agents send one
// as soon as a session is loaded.
func afterLoadUpdate(sid acp.SessionId) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + string(sid) +
		`","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"after-load","description":"sent right behind the load answer"}]}}}`
}

// ResumeSession implements acp.Agent: it answers without a replay.
func (a *agent) ResumeSession(ctx context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	if err := a.login.checkLogin(); err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	a.recordMCP(p.SessionId, p.McpServers)
	a.recordDirs(p.SessionId, p.AdditionalDirectories)
	if a.failLoad {
		return acp.ResumeSessionResponse{}, acp.NewInternalError(map[string]string{"error": "no such session " + string(p.SessionId)})
	}
	return acp.ResumeSessionResponse{Modes: loadedModes()}, nil
}

func (a *agent) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	if a.hangMode {
		<-ctx.Done() // the SDK ends it on the client's $/cancel_request
		a.modeGone <- struct{}{}
		return acp.SetSessionModeResponse{}, acp.NewInternalError(map[string]string{"reason": "cancelled"})
	}
	if a.mode == "rpcerrors" {
		return acp.SetSessionModeResponse{}, acp.NewInternalError(map[string]any{"reason": "mode locked", "detail": errData})
	}
	return acp.SetSessionModeResponse{}, nil
}

// Cancel is deliberately a no-op in every mode; the modes that end early do so on the prompt's context,
// which the SDK cancels on session/cancel.
func (a *agent) Cancel(ctx context.Context, p acp.CancelNotification) error { return nil }

func (a *agent) update(ctx context.Context, sid acp.SessionId, u acp.SessionUpdate) error {
	return a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: u})
}

func (a *agent) raw(line string) {
	_, _ = a.out.Write([]byte(line + "\n"))
}

func promptText(blocks []acp.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Text != nil {
			b.WriteString(c.Text.Text)
		}
	}
	return b.String()
}

func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	sid := p.SessionId
	// The prompt context ends on session/cancel; updates must still go out for the stubborn mode, so
	// they are sent on a context of their own.
	bg := context.Background()
	a.leakKey(sid)
	switch a.mode {
	case "mcp":
		return a.mcpTurn(bg, sid)
	case "term":
		return a.terminalTurn(ctx, sid, promptText(p.Prompt))
	case "fs":
		return a.fsTurn(ctx, sid, promptText(p.Prompt))
	case "rpcerrors":
		return acp.PromptResponse{}, acp.NewInternalError(errData)
	case "echo":
		return a.echoPrompt(ctx, p)
	case "elicit":
		return a.elicitTurn(ctx, sid, promptText(p.Prompt))
	case "usage":
		return a.usageTurn(bg, sid, promptText(p.Prompt))
	case "transcript":
		return a.transcriptTurn(bg, sid, promptText(p.Prompt))
	case "stubborn":
		_ = a.update(bg, sid, acp.StartToolCall("stub_1", "Run forever",
			acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress)))
		child := sleeper(300)
		if err := child.Start(); err == nil {
			fmt.Fprintf(os.Stderr, "testagent: child %d\n", child.Process.Pid)
		}
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("working"))
		select {} // never answers, whatever session/cancel says
	case "garbage":
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("one "))
		a.raw("this is not json")
		a.raw("{\"truncated\": ")
		a.raw("")
		a.raw("]]]")
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("two "))
		a.raw("Error: something printed a log line on stdout")
		a.raw(strings.Repeat("#", 1<<20)) // a 1 MiB non-JSON line: under the SDK's limit, so it is read and dropped
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("three"))
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case "huge":
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("before the huge line"))
		big := strings.Repeat("x", 11<<20)
		a.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + string(sid) +
			`","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + big + `"}}}}`)
		select {}
	case "exit":
		_ = a.update(bg, sid, acp.StartToolCall("exit_1", "About to die",
			acp.WithStartKind(acp.ToolKindExecute), acp.WithStartStatus(acp.ToolCallStatusInProgress)))
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("goodbye"))
		os.Exit(3)
	case "flood":
		var n, size int
		fmt.Sscanf(promptText(p.Prompt), "%d %d", &n, &size)
		chunk := strings.Repeat("f", max(size, 1))
		for i := 0; i < n; i++ {
			if err := a.update(bg, sid, acp.UpdateAgentMessageText(chunk)); err != nil {
				return acp.PromptResponse{}, err
			}
		}
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case "perms":
		for _, tc := range []struct {
			id   acp.ToolCallId
			kind acp.ToolKind
		}{{"perm_read", acp.ToolKindRead}, {"perm_edit", acp.ToolKindEdit}} {
			_ = a.update(bg, sid, acp.StartToolCall(tc.id, "Tool "+string(tc.kind),
				acp.WithStartKind(tc.kind), acp.WithStartStatus(acp.ToolCallStatusPending)))
			opts := []acp.PermissionOption{
				{OptionId: "allow", Name: "Not really", Kind: acp.PermissionOptionKindRejectOnce},
				{OptionId: "go", Name: "Go ahead", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionId: "never", Name: "Never", Kind: acp.PermissionOptionKindRejectAlways},
			}
			resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
				SessionId: sid,
				ToolCall:  acp.ToolCallUpdate{ToolCallId: tc.id, Kind: acp.Ptr(tc.kind), Status: acp.Ptr(acp.ToolCallStatusPending)},
				Options:   opts,
			})
			if ctx.Err() != nil {
				return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
			}
			status, chosen := acp.ToolCallStatusFailed, "none"
			if err == nil && resp.Outcome.Selected != nil {
				chosen = string(resp.Outcome.Selected.OptionId)
				if chosen == "go" {
					status = acp.ToolCallStatusCompleted
				}
			}
			_ = a.update(bg, sid, acp.UpdateToolCall(tc.id, acp.WithUpdateStatus(status),
				acp.WithUpdateRawOutput(map[string]any{"chosen": chosen})))
		}
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case "noise":
		var n int
		fmt.Sscanf(promptText(p.Prompt), "%d", &n)
		for i := 0; i < n; i++ {
			a.raw("noise " + strconv.Itoa(i))
		}
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case "escape":
		child := sleeper(1000)
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if promptText(p.Prompt) == "escape scrubbed and exit" {
			child.Env = []string{}
		}
		if err := child.Start(); err != nil {
			return acp.PromptResponse{}, err
		}
		fmt.Fprintf(os.Stderr, "testagent: escaped %d\n", child.Process.Pid)
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("escaped "+strconv.Itoa(child.Process.Pid)))
		if strings.HasSuffix(promptText(p.Prompt), "and exit") {
			os.Exit(0)
		}
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case "doublefork":
		pid, err := doubleFork()
		if err != nil {
			return acp.PromptResponse{}, err
		}
		fmt.Fprintf(os.Stderr, "testagent: escaped %d\n", pid)
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("escaped "+strconv.Itoa(pid)))
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case "raw":
		s := string(sid)
		a.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + s + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a<b && c>d"},"x-unknown":{"k":null}}}}`)
		a.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + s + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"line` + "\u2028" + `sep é"}}}}`)
		a.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + s + `","update":{"sessionUpdate":"some_future_update","payload": [1, 2.50, "<tag>"],"_meta":{"vendor":true}}}}`)
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case "badutf8":
		s, bad := string(sid), "\xff\xfe"
		a.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + s + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"bad ` + bad + ` text"}}}}`)
		a.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + s + `","update":{"sessionUpdate":"tool_call","toolCallId":"bad_1","title":"edit ` + bad + `","kind":"edit","status":"pending","rawInput":{"path":"/x/` + bad + `"}}}}`)
		a.raw("noise line " + bad)
		fmt.Fprint(os.Stderr, "stderr "+bad+"\n")
		// A permission request with raw bytes, written by hand: the SDK would replace them. Its answer comes
		// back with an id the SDK never sent and is dropped; the request is resolved when the turn ends.
		a.raw(`{"jsonrpc":"2.0","id":"badperm","method":"session/request_permission","params":{"sessionId":"` + s + `","toolCall":{"toolCallId":"bad_1","title":"rm ` + bad + `"},"options":[{"optionId":"ok","name":"Allow ` + bad + `","kind":"allow_once"}]}}`)
		_ = a.update(bg, sid, acp.UpdateAgentMessageText("done"))
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	return acp.PromptResponse{}, fmt.Errorf("unknown mode %q", a.mode)
}

func main() {
	mode := flag.String("mode", "garbage", "stubborn, garbage, huge, exit, flood, perms, elicit, noise, deaf, escape, doublefork, raw, badutf8, echo, startfail, rpcerrors, initexit, mcp, term, fs, events-escape or events-deaf")
	middle := flag.Bool("escape-middle", false, "internal: the middle process of doublefork")
	sleep := flag.Int("sleep", 0, "internal: sleep this many seconds and exit (the processes the modes start)")
	initName := flag.String("init", "", "answer initialize with distinctive values under this agent name")
	protoVersion := flag.Int("protocol-version", int(acp.ProtocolVersionNumber), "the protocolVersion initialize answers")
	pidDir := flag.String("pid-dir", "", "directory to record the agent's pid (and -init-child's) in")
	envFile := flag.String("env-file", "", "write the agent's environment (one entry a line) to this file at start")
	initChild := flag.Bool("init-child", false, "start a sleeper in the agent's process group on initialize")
	noLoad := flag.Bool("no-load", false, "advertise no loadSession")
	resumeOnly := flag.Bool("resume-only", false, "advertise sessionCapabilities.resume instead of loadSession")
	failLoad := flag.Bool("fail-load", false, "answer session/load and session/resume with a JSON-RPC error")
	mcpCaps := flag.String("mcp-caps", "", "mcpCapabilities to advertise: http, sse or both (comma-separated)")
	asMCP := flag.Bool("mcp-server", false, "be a stdio MCP server (mcp.go)")
	print := flag.String("print", "", "be a terminal command: print this (see printer in terminal.go)")
	repeat := flag.Int("repeat", 1, "with -print: how many times")
	printErr := flag.String("stderr", "", "with -print: also print this on stderr")
	printPid := flag.Bool("print-pid", false, "with -print: print the pid first")
	ignoreTerm := flag.Bool("ignore-term", false, "with -print: ignore SIGTERM")
	exit := flag.Int("exit", 0, "with -print: the exit status")
	getenv := flag.String("getenv", "", "with -print: print these environment variables (comma-separated) first")
	addDirs := flag.Bool("additional-dirs", false, "advertise sessionCapabilities.additionalDirectories")
	hangMode := flag.Bool("hang-set-mode", false, "session/set_mode answers only when cancelled ($/cancel_request); echo waits for one")
	afterLoad := flag.Bool("after-load", false, "send an available_commands_update right behind the session/load answer")
	loadGate := flag.String("load-gate", "", "session/load first reads this file (a FIFO a test holds shut) before it replays and answers")
	canFork := flag.Bool("fork", false, "advertise and answer session/fork (fork.go)")
	canDelete := flag.Bool("delete", false, "advertise and answer session/delete (fork.go)")
	recordDir := flag.String("record", "", "directory where session/fork and session/delete leave a file; echo names the session (fork.go)")
	loginKey := flag.String("login", "", "demand a login: session/new answers auth_required until TEST_API_KEY is this or agent-login was authenticated (loginkey.go)")
	readPaths := flag.String("read", "", "be a terminal command: for each path (comma-separated) print one line, its contents or why it could not be read")
	writePath := flag.String("write", "", "be a terminal command: write \"written\" to this file and print one line saying whether it could")
	loginCmd := flag.Bool("login-code", false, "be the login mode's login command: prompt for a code (loginkey.go)")
	loginHang := flag.Bool("login-hang", false, "with -login-code: never read the code")
	loginOAuth := flag.Bool("login-oauth", false, "be the login mode's loopback OAuth login command (loginkey.go)")
	flag.Parse()
	switch {
	case *loginCmd:
		os.Exit(loginWithCode(*loginHang))
	case *loginOAuth:
		os.Exit(loginWithOAuth())
	case *readPaths != "" || *writePath != "":
		tryAccess(*readPaths, *writePath)
		return
	case *asMCP:
		mcpServer()
		return
	case *print != "" || *printPid || *ignoreTerm || *getenv != "":
		printer(*print, *repeat, *printErr, *getenv, *printPid, *ignoreTerm, *sleep, *exit)
		return
	case *sleep > 0:
		time.Sleep(time.Duration(*sleep) * time.Second)
		return
	case *middle:
		escapeMiddle()
		return
	}
	writePid(*pidDir, os.Getpid())
	if *envFile != "" {
		// Written whole, then renamed: a reader never sees half of it.
		if os.WriteFile(*envFile+".tmp", []byte(strings.Join(os.Environ(), "\n")), 0o644) == nil {
			_ = os.Rename(*envFile+".tmp", *envFile)
		}
	}
	switch *mode {
	case "events-escape":
		eventsEscape()
		return
	case "events-deaf":
		hang()
	}
	out := &lockedWriter{w: os.Stdout}
	a := &agent{mode: *mode, out: out, deaf: make(chan struct{}), initName: *initName, pidDir: *pidDir, initChild: *initChild,
		noLoad: *noLoad, resumeOnly: *resumeOnly, failLoad: *failLoad, mcpCaps: *mcpCaps, afterLoad: *afterLoad, loadGate: *loadGate,
		addDirs: *addDirs, hangMode: *hangMode, protoVersion: acp.ProtocolVersion(*protoVersion), modeGone: make(chan struct{}, 16),
		canFork: *canFork, canDelete: *canDelete, recordDir: *recordDir}
	a.login.key = *loginKey
	a.conn = acp.NewAgentSideConnection(a, out, deafReader{r: os.Stdin, deaf: a.deaf})
	<-a.conn.Done()
}

// writePid records pid as an empty file named after it in dir ("" = nowhere).
func writePid(dir string, pid int) {
	if dir != "" {
		_ = os.WriteFile(dir+"/"+strconv.Itoa(pid), nil, 0o600)
	}
}

// hang blocks forever. Not `select {}`: with every goroutine blocked that way the runtime would report a
// deadlock and exit.
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}

// sleeper is a process that sleeps for the given seconds: this binary again, so it needs no PATH (the
// gateway passes agents only its allowlisted environment, possibly none).
func sleeper(seconds int) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return exec.Command(self, "-sleep", strconv.Itoa(seconds))
}

// doubleFork starts the middle process of a daemon-style double fork and returns the pid of the setsid
// grandchild it printed. The middle has exited when this returns, so the grandchild is no longer below the
// agent.
func doubleFork() (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	out, err := exec.Command(self, "-escape-middle").Output()
	if err != nil {
		return 0, fmt.Errorf("double fork: %v", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// escapeMiddle is the middle process of doubleFork: it starts a sleeper in a session of its own, prints its
// pid and exits.
func escapeMiddle() {
	child := sleeper(1000)
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testagent:", err)
		os.Exit(1)
	}
	fmt.Println(child.Process.Pid)
}

// eventsEscape is the events-escape mode: a native-dialect agent whose every prompt double-forks a process.
func eventsEscape() {
	out := json.NewEncoder(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct{ Type, TurnID string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "prompt" {
			continue
		}
		pid, err := doubleFork()
		if err != nil {
			_ = out.Encode(map[string]string{"type": "done", "status": "error", "turnId": ev.TurnID})
			continue
		}
		fmt.Fprintf(os.Stderr, "testagent: escaped %d\n", pid)
		_ = out.Encode(map[string]string{"type": "text_delta", "text": "escaped " + strconv.Itoa(pid)})
		_ = out.Encode(map[string]string{"type": "done", "status": "done", "turnId": ev.TurnID})
	}
}
