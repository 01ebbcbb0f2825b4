// Package telemetry emits the gateway's OpenTelemetry traces: HTTP server spans, a session's start
// (create_agent), its turns (invoke_agent) and the agent's tool calls (execute_tool), after the GenAI
// semantic conventions. A nil *Tracer is tracing off: every hook is then a nil check and nothing more.
package telemetry
