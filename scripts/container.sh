#!/usr/bin/env bash
# Builds the container image of packaging/Containerfile for this machine's architecture: the static linux binary
# from scripts/release.sh (stamped the same way), this machine's CA certificates (for OIDC issuers and OTLP
# collectors over https), an empty /tmp and the state directory, owned by the image's user (65532).
#
#   scripts/container.sh                              builds localhost/acp-gateway:<version> with podman
#   IMAGE=acp-gateway:test BUILDER=docker scripts/container.sh
#   VERSION=v1.2.3 ARCH=arm64 scripts/container.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILDER=${BUILDER:-podman}
ARCH=${ARCH:-$(go env GOARCH)}
CA=${CA:-/etc/ssl/certs/ca-certificates.crt}
[ -r "$CA" ] || { echo "container.sh: no CA bundle at $CA (Debian: apt-get install ca-certificates; or set CA=)" >&2; exit 1; }

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
TARGETS=linux/$ARCH PACKAGES= DIST="$ctx/dist" scripts/release.sh >/dev/null
bin=$(echo "$ctx"/dist/acp-gateway_*_linux_"$ARCH")
version=${bin#"$ctx"/dist/acp-gateway_}
version=v${version%_linux_"$ARCH"}
IMAGE=${IMAGE:-localhost/acp-gateway:$version}

install -d -m 0755 "$ctx/rootfs/usr/bin" "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/var/lib"
install -d -m 1777 "$ctx/rootfs/tmp"
install -m 0755 "$bin" "$ctx/rootfs/usr/bin/acp-gateway"
install -m 0644 "$CA" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
install -d -m 0700 "$ctx/state/acp-gateway" "$ctx/state/acp-gateway/workspace"

# podman and buildah write OCI images by default, which have no HEALTHCHECK: ask for the docker format.
format=()
case "$(basename "$BUILDER")" in podman | buildah) format=(--format docker) ;; esac
"$BUILDER" build "${format[@]}" --platform "linux/$ARCH" -t "$IMAGE" -f packaging/Containerfile "$ctx" >&2
echo "$IMAGE"
