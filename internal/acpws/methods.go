package acpws

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/telemetry"
	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// methodFunc handles one request on its own goroutine and queues its response.
type methodFunc func(c *conn, ctx context.Context, id, params json.RawMessage)

var methodTable = map[string]methodFunc{
	"initialize":                (*conn).initialize,
	"authenticate":              (*conn).authenticate,
	"session/new":               (*conn).newSession,
	"session/load":              (*conn).loadSession,
	"session/resume":            (*conn).resumeSession,
	"session/close":             (*conn).closeSession,
	"session/delete":            (*conn).deleteSession,
	"session/fork":              (*conn).forkSession,
	"session/list":              (*conn).listSessions,
	"session/prompt":            (*conn).prompt,
	"session/set_mode":          (*conn).setMode,
	"session/set_config_option": (*conn).setConfigOption,
}

func (c *conn) methods() map[string]methodFunc { return methodTable }

// MethodNames lists the JSON-RPC methods `/acp` answers, sorted: tests that must cover every method (the
// ownership table) derive their list from it.
func MethodNames() []string {
	names := make([]string, 0, len(methodTable))
	for n := range methodTable {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// paramsError is a -32602 with a message that names the offending member.
type paramsError struct{ msg string }

func (e *paramsError) Error() string { return e.msg }

func badParams(format string, args ...any) error { return &paramsError{fmt.Sprintf(format, args...)} }

// decodeParams decodes a params object; a type mismatch names the member in JSON terms.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return badParams("params are required")
	}
	if err := json.Unmarshal(params, v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return badParams("%s must be %s", ute.Field, jsonKind(ute.Type))
		}
		return badParams("params must be a JSON object")
	}
	return nil
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint16, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "of another type"
}

// fail queues the error response for err. An agent process that could not start is logged with its reason
// (which names the gateway's paths); the client gets the agent's name.
func (c *conn) fail(id json.RawMessage, err error) {
	if c.cancelledByClient(id) {
		c.reply(rpcError(id, codeRequestCancelled, "Request cancelled", nil))
		return
	}
	if sessionerr.IsStartFailure(err) {
		c.h.opts.Logger.Warn("agent start failed", "agent", c.agent, "err", err)
		err = fmt.Errorf("agent %q could not be started; the gateway log has the reason", c.agent)
	}
	code, msg, data := rpcErrorOf(err)
	c.reply(rpcError(id, code, msg, data))
}

// rpcErrorOf maps an error to a JSON-RPC error. An agent's own JSON-RPC error passes through.
func rpcErrorOf(err error) (int, string, any) {
	var pe *paramsError
	var re *acp.RequestError
	var ae *sessionerr.AgentError
	var le *sessionerr.LoginRequiredError
	switch {
	case errors.As(err, &le):
		// ACP's auth_required, with the methods the agent offered: the client logs in (REST
		// /v1/agents/{agent}/login) and sends session/new again.
		return sessionerr.CodeAuthRequired, "Authentication required", map[string]any{
			"code": "agent_login_required", "agent": le.Agent, "authMethods": le.AuthMethods}
	case errors.Is(err, sessionerr.ErrLoginRequired):
		return sessionerr.CodeAuthRequired, "Authentication required", map[string]any{"code": "agent_login_required"}
	case errors.As(err, &pe):
		return jsonrpc.InvalidParams, "Invalid params: " + pe.msg, nil
	case errors.Is(err, sessionerr.ErrForkUnsupported):
		// What an agent without session/fork answers; the gateway advertises fork only where the agent does.
		return jsonrpc.MethodNotFound, "Method not found: " + err.Error(), nil
	case errors.Is(err, sessionerr.ErrTurnRunning):
		return jsonrpc.InvalidParams, "a turn is already running", nil
	case errors.Is(err, sessionerr.ErrBadRequest), errors.Is(err, sessionerr.ErrUnknownAgent), errors.Is(err, sessionerr.ErrForbiddenCwd),
		errors.Is(err, sessionerr.ErrMCPStdioForbidden), errors.Is(err, sessionerr.ErrMCPNameConflict),
		errors.Is(err, sessionerr.ErrMCPUnsupported), errors.Is(err, sessionerr.ErrMCPFixed), errors.Is(err, sessionerr.ErrPromptTooLarge),
		errors.Is(err, sessionerr.ErrAdditionalDirsUnsupported):
		return jsonrpc.InvalidParams, "Invalid params: " + err.Error(), nil
	case errors.Is(err, sessionerr.ErrNotFound):
		return jsonrpc.NotFound, "Resource not found: session", nil
	case errors.Is(err, sessionerr.ErrForbidden):
		return jsonrpc.Forbidden, "Forbidden: the session is shared with you as a viewer, or only its owner may do this", nil
	case errors.Is(err, sessionerr.ErrClosed):
		return jsonrpc.NotFound, "Resource not found: session is closed", nil
	case errors.Is(err, sessionerr.ErrNotResumable):
		return jsonrpc.Internal, "Internal error: session is not resumable", nil
	case errors.As(err, &re):
		return re.Code, re.Message, re.Data
	case errors.As(err, &ae):
		return jsonrpc.Internal, "Internal error: " + ae.Error(), nil
	}
	return jsonrpc.Internal, "Internal error: " + err.Error(), nil
}

// getFailed answers a request whose session the registry did not give: -32002 when there is none the caller
// may see; any other error (a restored session the store could not load, a shutdown) is the error itself, so
// a client does not forget a session that still exists.
func (c *conn) getFailed(id json.RawMessage, sid string, err error) {
	if errors.Is(err, sessionerr.ErrNotFound) {
		c.reply(rpcError(id, jsonrpc.NotFound, "Resource not found: session", map[string]any{"sessionId": sid}))
		return
	}
	c.fail(id, err)
}

// session finds a session this socket attached to: -32002 when the registry has no such session (or none
// the socket's principal may see), -32602 when it has but this socket did not attach to it.
func (c *conn) session(id *string) (*sessions.Session, error) {
	if id == nil || *id == "" {
		return nil, badParams("sessionId is required")
	}
	if s := c.AttachedSession(*id); s != nil {
		return s, nil
	}
	if _, err := c.h.reg.GetAs(principal.From(c.ctx), *id); err != nil {
		return nil, err
	}
	return nil, badParams("session %s is not attached to this connection: call session/load or session/resume first", *id)
}

func (c *conn) initialize(ctx context.Context, id, params json.RawMessage) {
	var p struct {
		ProtocolVersion *int `json:"protocolVersion"`
	}
	if err := decodeParams(params, &p); err != nil {
		c.fail(id, err)
		return
	}
	if p.ProtocolVersion == nil {
		c.fail(id, badParams("protocolVersion is required"))
		return
	}
	var client struct {
		ClientCapabilities struct {
			Fs          fsCaps          `json:"fs"`
			Terminal    bool            `json:"terminal"`
			Elicitation elicitationCaps `json:"elicitation"`
		} `json:"clientCapabilities"`
	}
	_ = json.Unmarshal(params, &client) // best effort: what is not `true` is not advertised
	c.mu.Lock()
	c.fs, c.terminal = client.ClientCapabilities.Fs, client.ClientCapabilities.Terminal
	c.elicit = client.ClientCapabilities.Elicitation
	c.mu.Unlock()
	// The agent's own answer, probing it first when the gateway has not heard one yet (bounded by the start
	// timeout); without it the gateway answers for itself.
	known, ok := c.h.reg.AgentInit(ctx, c.agent)
	var agentCaps struct {
		PromptCapabilities json.RawMessage `json:"promptCapabilities"`
		MCP                struct {
			HTTP bool `json:"http"`
			SSE  bool `json:"sse"`
		} `json:"mcpCapabilities"`
		Session struct {
			Fork json.RawMessage `json:"fork"`
		} `json:"sessionCapabilities"`
	}
	if ok {
		_ = json.Unmarshal(known.Capabilities, &agentCaps)
	}
	prompt := any(map[string]any{})
	if len(agentCaps.PromptCapabilities) > 0 && string(agentCaps.PromptCapabilities) != "null" {
		prompt = agentCaps.PromptCapabilities
	}
	gw := map[string]any{"agent": c.agent, "version": c.h.opts.Version}
	if ok && len(known.Capabilities) > 0 {
		gw["agentCapabilities"] = known.Capabilities
	}
	if ok && len(known.AuthMethods) > 0 {
		// Not the top-level authMethods: registry sessions are started without an auth step, and
		// `authenticate` has no agent to go to before a session is attached.
		gw["authMethods"] = known.AuthMethods
	}
	info := any(map[string]string{"name": "acp-gateway", "title": "ACP Gateway (" + c.agent + ")", "version": c.h.opts.Version})
	if ok && len(known.Info) > 0 {
		info = known.Info
	}
	c.reply(rpcResult(id, map[string]any{
		"protocolVersion": acp.ProtocolVersionNumber,
		"agentCapabilities": map[string]any{
			"loadSession":         true,
			"promptCapabilities":  prompt,
			"mcpCapabilities":     map[string]any{"http": agentCaps.MCP.HTTP, "sse": agentCaps.MCP.SSE},
			"sessionCapabilities": sessionCaps(agentCaps.Session.Fork),
			"_meta":               map[string]any{"gateway": gw},
		},
		"agentInfo":   info,
		"authMethods": []any{},
	}))
}

// sessionCaps are the sessionCapabilities `/acp` advertises: list, resume, close and delete of its registry
// sessions always, and fork where the agent advertises it (fork is the agent's work; a delete without the
// agent's support still deletes the gateway's session).
func sessionCaps(agentFork json.RawMessage) map[string]any {
	caps := map[string]any{"list": map[string]any{}, "resume": map[string]any{}, "close": map[string]any{}, "delete": map[string]any{}}
	if len(agentFork) > 0 && string(agentFork) != "null" {
		caps["fork"] = map[string]any{}
	}
	return caps
}

func (c *conn) authenticate(ctx context.Context, id, params json.RawMessage) {
	var p struct {
		MethodID *string `json:"methodId"`
	}
	if err := decodeParams(params, &p); err != nil {
		c.fail(id, err)
		return
	}
	if p.MethodID == nil {
		c.fail(id, badParams("methodId is required"))
		return
	}
	c.mu.Lock()
	s := c.lastAtt
	c.mu.Unlock()
	if s == nil {
		c.reply(rpcError(id, jsonrpc.MethodNotFound, "authenticate is not available before a session is attached: agents behind the gateway authenticate through its configuration", nil))
		return
	}
	res, err := s.Authenticate(ctx, params)
	if err != nil {
		c.fail(id, err)
		return
	}
	if len(res) == 0 || string(res) == "null" {
		res = json.RawMessage(`{}`)
	}
	c.reply(rpcResult(id, res))
}

// sessionResult is the modes/configOptions part of new/load/resume responses.
func sessionResult(v sessions.View, m map[string]any) map[string]any {
	if len(v.Modes) > 0 {
		m["modes"] = v.Modes
	}
	if len(v.ConfigOptions) > 0 {
		m["configOptions"] = v.ConfigOptions
	}
	return m
}

func checkCwd(cwd *string, required bool) error {
	switch {
	case cwd == nil && required:
		return badParams("cwd is required")
	case cwd != nil && !filepath.IsAbs(*cwd):
		return badParams("cwd must be an absolute path")
	}
	return nil
}

// parseMcpServers reads a client's mcpServers (ACP's shape); absent or null is none.
func parseMcpServers(raw json.RawMessage) ([]agents.MCPServer, error) {
	list, err := agents.ParseMCPServers(raw)
	if err != nil {
		return nil, badParams("%s", err.Error())
	}
	return list, nil
}

func (c *conn) newSession(ctx context.Context, id, params json.RawMessage) {
	var p struct {
		Cwd            *string         `json:"cwd"`
		McpServers     json.RawMessage `json:"mcpServers"`
		AdditionalDirs []string        `json:"additionalDirectories"`
		Meta           json.RawMessage `json:"_meta"`
	}
	if err := decodeParams(params, &p); err != nil {
		c.fail(id, err)
		return
	}
	err := checkCwd(p.Cwd, true)
	var mcp []agents.MCPServer
	if err == nil {
		mcp, err = parseMcpServers(p.McpServers)
	}
	if err != nil {
		c.fail(id, err)
		return
	}
	var meta struct {
		Gateway struct {
			PermissionPolicy string `json:"permissionPolicy"`
			Node             string `json:"node"` // mode c: the node that should run the session
		} `json:"gateway"`
	}
	_ = json.Unmarshal(p.Meta, &meta) // best effort: `_meta` is an extension point
	s, err := c.h.reg.Create(ctx, sessions.CreateOptions{Agent: c.agent, Cwd: *p.Cwd, AdditionalDirs: p.AdditionalDirs, PermissionPolicy: meta.Gateway.PermissionPolicy, Owner: principal.From(ctx), MCPServers: mcp, Node: meta.Gateway.Node})
	if err != nil {
		c.fail(id, err)
		return
	}
	v := s.View()
	frame := rpcResult(id, sessionResult(v, map[string]any{"sessionId": s.ID}))
	if err := c.subscribe(s); err != nil {
		c.fail(id, err)
		return
	}
	// The response first, then everything the agent sent after session/new (available_commands_update…),
	// as a stdio agent would.
	c.send(func(w *writer) error {
		if err := w.write(frame); err != nil {
			return err
		}
		w.attach(s, 0, 0)
		return nil
	})
}

type attachParams struct {
	SessionID  *string         `json:"sessionId"`
	Cwd        *string         `json:"cwd"`
	McpServers json.RawMessage `json:"mcpServers"`
}

func (c *conn) attachTarget(ctx context.Context, id, params json.RawMessage) *sessions.Session {
	var p attachParams
	err := decodeParams(params, &p)
	if err == nil && (p.SessionID == nil || *p.SessionID == "") {
		err = badParams("sessionId is required")
	}
	if err == nil {
		err = checkCwd(p.Cwd, false)
	}
	var mcp []agents.MCPServer
	if err == nil {
		mcp, err = parseMcpServers(p.McpServers)
	}
	if err != nil {
		c.fail(id, err)
		return nil
	}
	s, err := c.h.reg.GetAs(principal.From(ctx), *p.SessionID)
	if err != nil {
		c.getFailed(id, *p.SessionID, err)
		return nil
	}
	if err := s.AttachMCPAs(principal.From(ctx), mcp); err != nil {
		c.fail(id, err)
		return nil
	}
	return s
}

// loadSession attaches and replays the session's transcript from its log, then answers; permission requests
// still pending follow the answer.
func (c *conn) loadSession(ctx context.Context, id, params json.RawMessage) {
	s := c.attachTarget(ctx, id, params)
	if s == nil {
		return
	}
	v := s.View()
	frame := rpcResult(id, sessionResult(v, map[string]any{}))
	if err := c.subscribe(s); err != nil {
		c.fail(id, err)
		return
	}
	transcript := c.h.opts.LoadReplay == ReplayTranscript
	c.send(func(w *writer) error {
		first, head := s.Log().Bounds()
		if transcript || first > 1 {
			return w.replayTranscript(s, frame)
		}
		a := w.attach(s, 0, head)
		if err := w.flush(a, head); err != nil {
			return err
		}
		if err := w.write(frame); err != nil {
			return err
		}
		return w.sendPending(a, head)
	})
}

// replayTranscript sends the session's transcript (from its snapshot), then the load response, then the
// pending permission requests; live frames follow from the seq the transcript reflects.
func (w *writer) replayTranscript(s *sessions.Session, response []byte) error {
	params, last := s.Replay()
	a := w.attach(s, last, last)
	for _, p := range params {
		f := make([]byte, 0, len(p)+64)
		f = append(f, `{"jsonrpc":"2.0","method":"session/update","params":`...)
		f = append(f, p...)
		if err := w.writeFor(s.ID, append(f, '}')); err != nil {
			return err
		}
	}
	if err := w.write(response); err != nil {
		return err
	}
	return w.sendPending(a, last)
}

// resumeSession attaches without replay: live frames from now on, plus permission requests still pending.
func (c *conn) resumeSession(ctx context.Context, id, params json.RawMessage) {
	s := c.attachTarget(ctx, id, params)
	if s == nil {
		return
	}
	v := s.View()
	frame := rpcResult(id, sessionResult(v, map[string]any{}))
	if err := c.subscribe(s); err != nil {
		c.fail(id, err)
		return
	}
	c.send(func(w *writer) error {
		if a := w.atts[s.ID]; a != nil && a.s == s {
			return w.write(frame) // already attached: nothing to change
		}
		_, head := s.Log().Bounds()
		a := w.attach(s, head, head)
		if err := w.write(frame); err != nil {
			return err
		}
		return w.sendPending(a, head)
	})
}

// namedSession is the registry session that params' sessionId names, whether or not this socket attached to
// it (session/close, session/delete); it answers the request itself and returns nil when there is none.
func (c *conn) namedSession(ctx context.Context, id, params json.RawMessage) *sessions.Session {
	var p struct {
		SessionID *string `json:"sessionId"`
	}
	if err := decodeParams(params, &p); err != nil {
		c.fail(id, err)
		return nil
	}
	if p.SessionID == nil || *p.SessionID == "" {
		c.fail(id, badParams("sessionId is required"))
		return nil
	}
	s, err := c.h.reg.GetAs(principal.From(ctx), *p.SessionID)
	if err != nil {
		c.getFailed(id, *p.SessionID, err)
		return nil
	}
	return s
}

func (c *conn) closeSession(ctx context.Context, id, params json.RawMessage) {
	s := c.namedSession(ctx, id, params)
	if s == nil {
		return
	}
	if err := s.CloseAs(principal.From(ctx), "closed by an ACP client"); err != nil {
		c.fail(id, err)
		return
	}
	c.replyAfterLog(s, rpcResult(id, map[string]any{}))
}

func (c *conn) prompt(ctx context.Context, id, params json.RawMessage) {
	var p struct {
		SessionID *string         `json:"sessionId"`
		Prompt    json.RawMessage `json:"prompt"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if err := decodeParams(params, &p); err != nil {
		c.fail(id, err)
		return
	}
	ctx = telemetry.FromMeta(ctx, p.Meta) // the client's _meta.traceparent is the turn's parent
	s, err := c.session(p.SessionID)
	if err != nil {
		c.fail(id, err)
		return
	}
	if len(p.Prompt) == 0 {
		c.fail(id, badParams("prompt is required"))
		return
	}
	blocks, err := sessions.ParsePrompt(p.Prompt)
	if err != nil {
		c.fail(id, err)
		return
	}
	// Mark the turn as ours before the writer can see its user_message_chunks (they are logged by Prompt),
	// under an id chosen here: mu is not held across the prompt, which may re-attach the session (start its
	// agent and load it) while the writer and this socket's other requests need mu.
	turnID := uuid.NewString()
	c.mu.Lock()
	c.ownTurns[turnID] = struct{}{}
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.ownTurns, turnID)
		c.mu.Unlock()
	}
	t, err := s.PromptContext(ctx, principal.From(ctx), blocks, turnID)
	if err != nil {
		forget()
		c.fail(id, err)
		return
	}
	select {
	case <-t.Done():
	case <-ctx.Done():
		if !errors.Is(context.Cause(ctx), errCancelRequested) {
			forget() // the socket is gone; the turn goes on
			return
		}
		// `$/cancel_request` of the prompt cancels its turn, as session/cancel does; the answer follows the turn.
		if _, err := s.CancelAs(c.ctx, principal.From(c.ctx)); err != nil && !errors.Is(err, sessionerr.ErrNoTurn) {
			c.h.opts.Logger.Debug("acp: $/cancel_request of a prompt", "session", s.ID, "err", err)
		}
		select {
		case <-t.Done():
		case <-c.ctx.Done():
			forget()
			return
		}
	}
	res := t.Result()
	var frame []byte
	if res.Err != nil {
		code, msg, data := rpcErrorOf(res.Err)
		frame = rpcError(id, code, msg, data)
	} else {
		answer := map[string]any{
			"stopReason": res.StopReason,
			"_meta":      map[string]any{"gateway": map[string]any{"turnId": t.ID}},
		}
		if res.Usage != nil {
			answer["usage"] = res.Usage // the agent's PromptResponse.usage, as ACP clients read it
		}
		frame = rpcResult(id, answer)
	}
	_, head := s.Log().Bounds()
	if !c.send(func(w *writer) error {
		if a := w.atts[s.ID]; a != nil && a.s == s {
			if err := w.flush(a, head); err != nil {
				return err
			}
		}
		forget()
		return w.write(frame)
	}) {
		forget()
	}
}

func (c *conn) setMode(ctx context.Context, id, params json.RawMessage) {
	var p struct {
		SessionID *string `json:"sessionId"`
		ModeID    *string `json:"modeId"`
	}
	if err := decodeParams(params, &p); err != nil {
		c.fail(id, err)
		return
	}
	s, err := c.session(p.SessionID)
	if err == nil && (p.ModeID == nil || *p.ModeID == "") {
		err = badParams("modeId is required")
	}
	if err == nil {
		err = s.SetModeAs(ctx, principal.From(ctx), *p.ModeID)
	}
	if err != nil {
		c.fail(id, err)
		return
	}
	c.replyAfterLog(s, rpcResult(id, map[string]any{}))
}

func (c *conn) setConfigOption(ctx context.Context, id, params json.RawMessage) {
	var p struct {
		SessionID *string         `json:"sessionId"`
		ConfigID  *string         `json:"configId"`
		Value     json.RawMessage `json:"value"`
	}
	if err := decodeParams(params, &p); err != nil {
		c.fail(id, err)
		return
	}
	s, err := c.session(p.SessionID)
	switch {
	case err != nil:
	case p.ConfigID == nil || *p.ConfigID == "":
		err = badParams("configId is required")
	case len(p.Value) == 0 || string(p.Value) == "null":
		err = badParams("value is required")
	}
	if err != nil {
		c.fail(id, err)
		return
	}
	opts, err := s.SetConfigOptionAs(ctx, principal.From(ctx), *p.ConfigID, p.Value)
	if err != nil {
		c.fail(id, err)
		return
	}
	c.replyAfterLog(s, rpcResult(id, map[string]any{"configOptions": opts}))
}

// listCursor is the position after the last session of a page: sessions are ordered by (createdAt, id).
type listCursor struct {
	T int64  `json:"t"`
	I string `json:"i"`
}

func (c *conn) listSessions(ctx context.Context, id, params json.RawMessage) {
	var p struct {
		Cwd    *string `json:"cwd"`
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 && string(params) != "null" {
		if err := decodeParams(params, &p); err != nil {
			c.fail(id, err)
			return
		}
	}
	if err := checkCwd(p.Cwd, false); err != nil {
		c.fail(id, err)
		return
	}
	var after *listCursor
	if p.Cursor != nil {
		raw, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
		var cur listCursor
		if err != nil || json.Unmarshal(raw, &cur) != nil || cur.I == "" {
			c.fail(id, badParams("cursor is not one this gateway returned"))
			return
		}
		after = &cur
	}
	page := c.h.opts.ListPageSize
	out := []map[string]any{}
	var next string
	for _, s := range c.h.reg.ListAs(principal.From(ctx)) {
		if s.Agent != c.agent || (p.Cwd != nil && filepath.Clean(*p.Cwd) != s.Cwd) {
			continue
		}
		t := s.CreatedAt.UnixNano()
		if after != nil && (t < after.T || t == after.T && s.ID <= after.I) {
			continue
		}
		if len(out) == page {
			last := out[len(out)-1]["_cursor"].(listCursor)
			b, _ := json.Marshal(last)
			next = base64.RawURLEncoding.EncodeToString(b)
			break
		}
		out = append(out, map[string]any{
			"sessionId": s.ID,
			"cwd":       s.Cwd,
			"_meta": map[string]any{"gateway": map[string]any{
				"agent": s.Agent, "status": s.Status(), "createdAt": s.CreatedAt.Format(time.RFC3339Nano),
			}},
			"_cursor": listCursor{T: t, I: s.ID},
		})
	}
	for _, m := range out {
		delete(m, "_cursor")
	}
	res := map[string]any{"sessions": out}
	if next != "" {
		res["nextCursor"] = next
	}
	c.reply(rpcResult(id, res))
}
