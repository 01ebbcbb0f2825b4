// Package agents starts and supervises the agents the gateway serves, and speaks ACP to them as the client.
//
// An agent is either an external process speaking ACP over stdio (its own process group, an allowlisted
// environment, stderr drained into a bounded buffer) or a built-in agent running in-process over pipes. Both
// go through the same acp-go-sdk connection, so the built-in agent exercises exactly the path real agents take.
// This package never touches HTTP; what agents send is handed to a Handler that must not block.
package agents
