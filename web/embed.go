// Package web holds the gateway's built-in browser UI: plain ES modules and CSS with no build step, embedded into the
// binary. The UI talks only to the gateway's public REST and WebSocket APIs (/v1/...).
//
// Serve it with http.FileServerFS(web.FS()) at "/". Every file is meant to be served with a strict
// Content-Security-Policy (default-src 'self'): the UI has no inline script or style and loads nothing from elsewhere.
package web

import (
	"embed"
	"io/fs"
)

// Files holds the static UI under the directory "static".
//
//go:embed static
var Files embed.FS

// FS returns the static UI rooted at its directory, so that "index.html" is at the root.
func FS() fs.FS {
	sub, err := fs.Sub(Files, "static")
	if err != nil {
		// fs.Sub fails only for an invalid path; "static" is a constant.
		panic(err)
	}
	return sub
}
