# The two commands a newcomer needs: `make run` and `make test`.
.PHONY: run test test-go bench

# go run stamps no commit unless asked (-buildvcs=true); outside a git checkout it stays `dev`.
run:
	go run $(shell git rev-parse --git-dir >/dev/null 2>&1 && echo -buildvcs=true) ./cmd/gateway

# Everything CI runs: the lint of openapi.yaml, go vet, go test -race, the browser and conformance suites (installs what they need).
test:
	./scripts/test.sh

# Only the Go tests.
test-go:
	go test -race ./...

# The side-by-side benchmark (direct stdio, gateway x1/x10, stdio-to-ws, scale) and the micro-benchmarks;
# docs/PERFORMANCE.md explains the figures.
bench:
	cd bench && npm ci --no-audit --no-fund --loglevel=error
	go run ./cmd/gwbench -out bench-results.json
	go test -run '^$$' -bench . -benchmem ./internal/...
