// Package acpschema validates ACP JSON-RPC traffic against the protocol's own JSON Schemas, for tests.
//
// It embeds copies of acp-go-sdk v0.13.0's schema/schema.json (stable) and schema/schema.unstable.json and
// compiles them with santhosh-tekuri/jsonschema. The root schema is useless as a gate (every message's params
// is `anyOf […, ExtRequest]`, which accepts any JSON), so params and results are validated per method against
// the `$defs` type that the schema's own `x-method` annotations name. The method → type table is therefore
// derived from the schema files, not typed by hand, and cannot drift from them.
//
// Guidance from the protocol brief: validate what the gateway originates against Stable, and what agents
// send (and what the gateway forwards from them) against Unstable, because real agents send unstable
// variants such as `usage_update`.
//
// The package is meant for tests; it is safe for concurrent use and compiles each `$defs` type at most once.
package acpschema
