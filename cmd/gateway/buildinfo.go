package main

import (
	"fmt"
	"io"

	"github.com/acp-gateway/gateway/internal/buildinfo"
)

// build is this binary's version, commit and date (internal/buildinfo; scripts/release.sh stamps them).
var build = buildinfo.Get()

// init lets the older -X main.version=… stamp win, and otherwise gives version the build's.
func init() {
	if version != "dev" {
		build.Version = version
		return
	}
	version = build.Version
}

// printVersion answers --version: the version on the first line (scripts read it), then the rest.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "gateway %s\ncommit: %s\ndate: %s\ngo: %s\n", build.Version, build.Commit, build.Date, build.GoVersion)
}
