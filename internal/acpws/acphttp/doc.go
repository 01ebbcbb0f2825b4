// Package acphttp is the Streamable HTTP transport of `/acp` (the official ACP SDK's wire): POSTed messages,
// the SSE streams they are answered on, and where each frame of a connection waits for its receiver. The
// connection it carries (its methods, sessions and writer) is acpws's; docs/acp.md describes the wire.
package acphttp
