// Package acpws serves raw ACP at `/acp` and `/acp/{agent}`, over WebSocket and over Streamable HTTP: the
// client is the ACP client and the gateway its agent, backed by the session registry. A connection (conn)
// holds the methods, attachments, log cursors and fs delegation; a transport only carries its messages.
// The protocol as clients see it is in docs/acp.md and docs/websocket.md.
package acpws
