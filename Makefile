# The two commands a newcomer needs: `make run` and `make test`.
.PHONY: run test test-go bench

run:
	go run ./cmd/gateway

# Everything CI runs: go vet, go test -race, the browser and conformance suites (installs what they need).
test:
	./scripts/test.sh

# Only the Go tests.
test-go:
	go test -race ./...

bench:
	go test -run '^$$' -bench . -benchmem ./internal/...
