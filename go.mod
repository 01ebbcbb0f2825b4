module github.com/acp-gateway/gateway

go 1.26.8

require (
	github.com/coder/acp-go-sdk v0.13.0
	github.com/google/uuid v1.6.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-chi/chi/v5 v5.5.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/text v0.14.0 // indirect
)
