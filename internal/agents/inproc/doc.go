// Package inproc serves an acp.Agent in-process over a reader/writer pair: the plumbing the built-in agents
// (internal/agents/demo, internal/agents/events) share, so that each of them holds only its own handlers.
//
// It owns three things that must be the same for every in-process agent: the gated input that keeps the
// SDK's reader from racing the connection's setup, the Tracker that lets Serve wait for handlers and the
// goroutines they start, and the shutdown sequence of Serve (stop the agent, unblock the SDK's reader, wait
// for tracked work, then report why the input ended).
package inproc
