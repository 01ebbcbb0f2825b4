// Package httpapi is the REST face of the gateway: sessions, prompts, permissions, agents, health, and the
// OpenAPI document. Handlers return errors; one function (writeError) renders every error as
// application/problem+json with a stable `type`, so clients can branch on it without parsing prose.
package httpapi
