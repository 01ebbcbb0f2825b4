// Package acpws serves raw ACP at `/acp` and `/acp/{agent}`, over WebSocket and over Streamable HTTP.
//
// This is the face for clients that already speak ACP (marimo's agent panel through use-acp, anything built on
// the official TypeScript SDK's `createWebSocketStream` or `createHttpStream`): the client is the ACP client
// and the gateway is its agent, backed by the session registry. Sessions made here are ordinary registry
// sessions (visible over REST and `/v1/sessions/{id}/ws`), and sessions made elsewhere can be loaded here. The
// ACP sessionId is the gateway session id.
//
// # Transports
//
// A connection (conn) is the same whatever carries it: the methods, attachments, log cursors, fs delegation
// and the ordering of answers after updates are its own; a transport only takes the client's messages in
// (receive → conn.dispatch) and puts frames out (write, called by the connection's one writer). A WebSocket
// upgrade is wsTransport: one JSON-RPC message per text frame. A POST, GET or DELETE is httpTransport, the
// Streamable HTTP wire of the official SDK (docs/acp.md): `initialize` POSTed without Acp-Connection-Id
// opens a connection and is answered in the POST's response with the connection's id; every later message is
// POSTed with that id (202) and answered on an SSE stream the client GETs — the connection's, or with
// Acp-Session-Id a session's. A session's frames go on its session stream, a response on the stream of its
// request's session (session/load's too, after its replay), else on the connection's stream. Frames wait on
// their stream for a receiver (one per stream; 409 for a second), at most QueueBytes across the connection;
// a writer that waits for room past WriteTimeout ends the connection (the frame writer's watchdog). A
// connection with no stream and no request for IdleTimeout ends; DELETE ends it at once. Ending, either
// transport, is the same: sessions and turns go on, fs delegation returns to the gateway. Both transports
// share the MaxConns cap; the WebSocket's 101 also carries an Acp-Connection-Id, as the official server's.
//
// # Connection model
//
// Each connection has exactly one receiver (a WebSocket's reader goroutine; for Streamable HTTP the goroutine
// that waits for the end of the connection while its POSTs dispatch) and one writer goroutine, joined before
// the connection ends, plus at most Options.MaxInflight request goroutines (also joined). A WebSocket
// connection runs on its upgrade's handler; a Streamable HTTP one on a goroutine its initialize POST starts,
// owned by the Handler (Shutdown waits for it). The reader never blocks for long: every
// request that talks to a session or an agent runs on its own goroutine; a full budget answers -32603 at
// once. The writer is the only goroutine that writes data frames, through the frame writer every streaming
// face shares (frameout: no per-frame context, a watchdog ends a write stuck past WriteTimeout). It is fed by
// a bounded queue of operations (responses, attach/replay steps) and by the event logs of the sessions this
// connection attached to (session/new, session/load, session/resume): it reads each log through its own
// eventlog.Cursor, so the agent and the log never wait for this socket. While it has nothing to write it waits
// on a fixed set of channels: a log with nothing new has one watcher goroutine that wakes the writer when the
// log grows. A connection that falls more than QueueFrames/QueueBytes behind a live log is ended (a socket
// with 4001; raw ACP has no resync: the client reconnects and calls session/load). At most Options.MaxConns
// connections are open at once; past it the upgrade or initialize is refused with a 503.
//
// Responses that concern a session (prompt, load, set_mode, …) are written only after the socket has
// forwarded that session's log up to the point where the answer was known: `{stopReason}` follows every
// update of its turn, a load's response follows the whole replay, a set_mode response follows the agent's
// current_mode_update. This is the ordering a native stdio agent gives.
//
// # What is forwarded
//
// From the log of an attached session: `session/update` frames byte for byte (unknown variants, fields,
// `_meta` and wire order intact), and `session/request_permission` requests whose permission is still
// pending, with the gateway permission id as JSON-RPC id; `elicitation/create` requests likewise, but only to
// a client that advertised `clientCapabilities.elicitation` with the request's mode, and the agent's
// `elicitation/complete` to one that advertised `url`. `_gateway/*` frames are not forwarded (ACP clients
// do not know them). The `_meta.gateway` stamp ({seq, epoch, turnId, …}) the log puts into every frame is
// kept: `_meta` is ACP's extension point, clients ignore keys they do not know, and it lets a client
// correlate frames with the REST API. The log says each frame's kind, so the updates every socket forwards
// (nearly every frame of a turn) are sent without being decoded; the others are decoded to see whose turn.
//
// The `user_message_chunk` updates the gateway logs for a prompt are not echoed live to the socket that sent
// that prompt (a native agent does not echo the user's prompt during a turn). Prompts sent by other clients
// (REST, another socket) are forwarded, and session/load replays every user message.
//
// The client's JSON-RPC response to a forwarded permission request resolves it through
// Session.Answer(..., "acp"); an error response means `cancelled`. The same permission may be answered by
// another client first (REST, another socket) or resolved by the gateway (cancel, close, deadline, turn
// end): the socket then sends ACP's `$/cancel_request {requestId: <permission id>}` so the client stops
// asking (the TypeScript and Go SDKs abort the handler), and a late answer is ignored (logged at debug).
//
// Each attachment counts as one subscriber of the session (Session.Attach): it is bound by the session's
// client cap and keeps the idle reaper away until the socket closes or the session does.
//
// # Methods
//
//   - initialize: `clientCapabilities.fs`, `.terminal` and `.elicitation` are read (see File access and
//     terminals, and above); the rest
//     of clientCapabilities is ignored. The answer: protocolVersion 1; agentCapabilities are the gateway's: loadSession true (the gateway
//     replays its own log for every agent), sessionCapabilities {list, resume, close}, promptCapabilities as
//     the agent's (prompts pass through), mcpCapabilities {http, sse} as the agent's (a client's http and sse
//     MCP servers are passed to agents that support them; docs/agents.md, MCP servers). agentInfo
//     is the agent's own. Both come from the agent's own initialize answer, which the registry learns from
//     every session start and, before any, by probing the agent once (Registry.AgentInit: start it, ask,
//     stop it; bounded by the start timeout), so clients see image or context support the agent has before
//     they create a session. The agent's raw capabilities and authMethods are in
//     `agentCapabilities._meta.gateway.{agentCapabilities,authMethods}`. When the probe fails (remembered
//     briefly), the answer is the gateway's own: agentInfo {name: "acp-gateway", …}, promptCapabilities {}.
//     authMethods is always []: agents behind the gateway authenticate through the operator's configuration
//     (environment, the agents file's "authenticate"), registry sessions are created without an auth step,
//     and `authenticate` has no agent to go to before a session is attached.
//   - authenticate: forwarded to the agent process of the session most recently attached on this socket;
//     with no attached session it is answered -32601 (not available).
//   - session/new: creates a registry session of this socket's agent. cwd must be an absolute directory.
//     mcpServers are the client's MCP servers, passed to the agent with the configured ones by the registry's
//     rules (-32602 for a stdio server without --allow-client-mcp-stdio, an http/sse server the agent does not
//     support, a configured name, a malformed entry). additionalDirectories are confined as cwd is (-32602
//     outside the workspace roots, or for an agent that does not advertise them).
//     `_meta.gateway.permissionPolicy` may choose the session's policy (default "ask").
//   - session/load: attaches to any registry session by id (of any agent), replays its history, then
//     answers; permission requests still pending are sent after the answer, live frames after that. The
//     replay is Options.LoadReplay: by default the log's `session/update` frames byte for byte (what live
//     clients saw, `_meta.gateway` included); when the log was trimmed (--log-max-frames/--log-max-bytes) and
//     for ReplayTranscript, the snapshot's compact transcript (Session.Replay: messages, each tool call in
//     its final state, last plan/commands/title). cwd is accepted and ignored (the session keeps its own
//     cwd); mcpServers replace the client's servers while the session is detached, and may only repeat the
//     session's own while its agent runs (Session.AttachMCPAs), else -32602; only the owner or an admin
//     changes them (-32003 for a viewer or collaborator naming a server the session does not have).
//   - session/resume: attaches without replay, then sends pending permission requests. mcpServers as for
//     session/load.
//   - session/close: closes the registry session (cancels its turn, stops its agent) for every client.
//   - session/prompt, session/cancel, session/set_mode, session/set_config_option: act on a session
//     attached to this socket (-32602 otherwise). A second prompt while a turn runs: -32602 "a turn is
//     already running". The prompt response carries `_meta.gateway.turnId` (and the agent's `usage`).
//   - `$/cancel_request` (notification): cancels the client's request in progress (cancelreq.go).
//   - session/list: sessions of this socket's agent, oldest first, filtered by cwd when given, with opaque
//     cursor pagination (Options.ListPageSize a page). title and updatedAt are not tracked and left out;
//     `_meta.gateway` carries agent, status and createdAt.
//
// # File access
//
// The gateway is every agent's ACP client and serves its fs/read_text_file and fs/write_text_file itself,
// confined to the session's cwd. A client that advertised `clientCapabilities.fs.readTextFile` and/or
// `writeTextFile` in initialize becomes the fs delegate (Session.DelegateFS) of each session it attaches
// (session/new, session/load, session/resume) while its principal may act on the session (never a viewer):
// the agent's request goes to the client on this socket, with a
// JSON-RPC id the socket mints (a number; permission requests carry string ids) and the gateway session id
// in its params, written after the session's log as it stood when the request arrived (the updates the
// agent sent before it). The client's response, result or error, goes back to the agent as is; a result
// must be an object (null counts as {}). A method the client did not advertise is served by the gateway
// (Session.ServeFSLocally): a read-only client gets the reads, the gateway does the writes.
//
// The socket that attached last among those whose principal may act is the delegate; when it closes, its
// attachment ends (the session closed) or its principal's share ends or drops to viewer, the previous such
// socket still attached takes over, or else the gateway; a request it holds at that moment is withdrawn and
// served again. A delegated
// request waits at most Options.FSTimeout (30 s), then fails with -32603 and is withdrawn from the client
// with `$/cancel_request {requestId}`; the agent cancelling it does the same (-32800). One still waiting when
// the socket closes fails with -32603. Late answers are ignored. The wait runs on the agent's request
// goroutine: the socket's reader only hands the answer over, and the request is written by its one writer.
//
// # Terminals
//
// The gateway also serves every agent's terminal/* itself (agentsvc/terminals.go). A client that advertised
// `clientCapabilities.terminal: true` is delegated them by the same rule as fs/* (the same delegate: the
// socket that attached last among those that advertised fs or terminal): terminal/create goes to it, and
// so does every later terminal/* whose terminalId the gateway does not hold; ids the gateway minted stay
// with the gateway. A delegate that did not advertise terminal lets the gateway run the terminal
// (Session.ServeTerminalLocally). terminal/wait_for_exit is not bounded by Options.FSTimeout.
//
// # Errors and closes
//
// Malformed JSON: -32700 with id null. Valid JSON that is not a request, notification or response: -32600.
// Unknown method: -32601. Wrong params: -32602. Unknown session: -32002. Agent failures: the agent's own
// JSON-RPC error when it sent one, else -32603. Unknown notifications are ignored, as ACP asks. Replies echo
// the request's id re-encoded (rawjson.EchoID), never the client's raw bytes. Binary frame: close 1003; text
// frame that is not UTF-8: 1007; frame over Options.ReadLimit: close 1009; no room in the shared inbound
// budget (Options.Inbound) for a frame: 1013; gateway shutdown: 1001; too slow: 4001.
// Closing the socket never closes a session or stops its turn. Streamable HTTP has no close codes: a body
// that is not one JSON-RPC message is a 400 with a JSON-RPC error (id null), other refusals problem+json
// (docs/acp.md has the table).
package acpws
