// Package gateway holds the files that describe the gateway as a whole: the OpenAPI contract, embedded so the
// binary serves the same document the repository keeps (and a test keeps equal to the router).
package gateway

import _ "embed"

// OpenAPI is openapi.yaml, served at /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
