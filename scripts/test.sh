#!/usr/bin/env bash
# The whole test suite, as CI runs it. It sets up what it needs on a fresh machine: Go modules, the npm packages
# of the browser and conformance tests, and Debian's chromium, curl, jq, python3, nginx and caddy when they are
# missing. The
# lint of openapi.yaml needs Node.js (npx), as the browser suites do.
set -euo pipefail
cd "$(dirname "$0")/.."

# apt_install installs Debian packages, as root or through sudo.
apt_install() {
	if [[ $(id -u) -eq 0 ]]; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
	else
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
	fi
}

# The README's curl session and the Python example are run by Go tests (cmd/gateway readme_e2e_test.go):
# they need curl, jq and python3; docs/deploy.md's walk-through (deploy_drill_e2e_test.go) needs openssl too.
missing=()
for tool in curl jq python3 openssl; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
	echo "== installing ${missing[*]} (the README and example tests)"
	apt_install "${missing[@]}"
fi

# The release test (packaging/release_test.go) checks the systemd unit with systemd-analyze; without it the check
# is skipped, so install it.
if ! command -v systemd-analyze >/dev/null; then
	echo "== installing systemd (systemd-analyze, for the unit check)"
	apt_install systemd
fi

# The reverse-proxy tests (cmd/gateway proxy_*_e2e_test.go) run docs/deploy.md's configurations with a real
# nginx and a real Caddy (Debian's packages; their services are not started): without them the tests skip.
missing=()
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
command -v caddy >/dev/null || missing+=(caddy)
if ((${#missing[@]})); then
	echo "== installing ${missing[*]} (the reverse-proxy tests)"
	apt_install "${missing[@]}"
fi

echo "== openapi.yaml: redocly lint (pinned; no errors, no warnings beyond .redocly.lint-ignore.yaml)"
npx --yes @redocly/cli@2.77.0 lint --max-problems 100 openapi.yaml

echo "== go: modules, gofmt, vet, race tests"
go mod download
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
if [ -n "$unformatted" ]; then echo "gofmt: not formatted:" $unformatted; exit 1; fi
go vet ./...
go test -race -count=1 ./...
# The patched acp-go-sdk copy is a module of its own: its patch's tests (third_party/acp-go-sdk/README.gateway.md).
(cd third_party/acp-go-sdk && go test -race -count=1 -run 'Decode|Inline|Valid' .)

echo "== gwbench -short (figures only; it fails only when the benchmark cannot run)"
(cd bench && npm ci --no-audit --no-fund --loglevel=error) || echo "bench: npm ci failed; the stdio-to-ws row will say n/a"
go run ./cmd/gwbench -short -out "${TMPDIR:-/tmp}/bench-results.json"

if [[ "${SKIP_E2E:-}" == "1" ]]; then
	echo "SKIP_E2E=1: skipping the browser and conformance suites"
	exit 0
fi

if [[ ! -x /usr/bin/chromium ]]; then
	echo "== installing Debian chromium"
	apt_install chromium
fi

for suite in e2e conformance; do
	[[ -f "$suite/package.json" ]] || continue
	echo "== $suite: npm ci, npm test"
	(cd "$suite" && npm ci --no-audit --no-fund --loglevel=error && npm test)
done
