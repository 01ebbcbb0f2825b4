#!/usr/bin/env bash
# Reproducible release build: static binaries (CGO_ENABLED=0, -trimpath) for linux and darwin on amd64 and
# arm64, .deb and .rpm packages of the linux ones (nfpm), and SHA256SUMS, all in dist/. Version, commit and
# date are stamped with -ldflags -X; every timestamp comes from the commit (SOURCE_DATE_EPOCH), so the same
# commit and Go version give the same bytes.
#
#   scripts/release.sh                           everything
#   TARGETS=linux/amd64 PACKAGES=deb scripts/release.sh   one binary and one package (what CI builds)
#   VERSION=v1.2.3 DIST=/tmp/out scripts/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."

NFPM="github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2"
TARGETS=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
PACKAGES=${PACKAGES-deb rpm}
DIST=${DIST:-dist}

COMMIT=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	COMMIT="$COMMIT-dirty"
	echo "release.sh: the tree has uncommitted changes; the build is stamped $COMMIT and is not reproducible" >&2
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
# A tag on HEAD names the release; otherwise a Go pseudo-version (semver, so packages accept it).
VERSION=${VERSION:-$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null ||
	echo "v0.0.0-$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S)-${COMMIT:0:12}")}

pkg=github.com/acp-gateway/gateway/internal/buildinfo
ldflags="-s -w -buildid= -X $pkg.version=$VERSION -X $pkg.commit=$COMMIT -X $pkg.date=$DATE"

mkdir -p "$DIST"
built=()
for target in $TARGETS; do
	os=${target%/*} arch=${target#*/}
	out="$DIST/acp-gateway_${VERSION#v}_${os}_${arch}"
	echo "release.sh: building $out" >&2
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out" ./cmd/gateway
	touch -d "@$SOURCE_DATE_EPOCH" "$out" 2>/dev/null || :
	built+=("$(basename "$out")")
	[ "$os" = linux ] || continue
	# nfpm expands variables in version and arch, not in paths: the binary's path is written into a copy.
	config=$(mktemp)
	sed "s|\${NFPM_BINARY}|$out|" packaging/nfpm.yaml >"$config"
	for format in $PACKAGES; do
		echo "release.sh: packaging $format for $arch" >&2
		NFPM_ARCH=$arch NFPM_VERSION=$VERSION go run "$NFPM" package --config "$config" --packager "$format" --target "$DIST/" >&2
	done
	rm -f "$config"
done
(
	cd "$DIST"
	for f in *.deb *.rpm; do [ -e "$f" ] && built+=("$f"); done
	sha256sum "${built[@]}" >SHA256SUMS
	cat SHA256SUMS
)
