package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// startRefused runs the gateway with a context already cancelled, so a start that passes the checks under
// test returns at once instead of serving; it returns run's error.
func startRefused(t *testing.T, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	full := append([]string{"--addr", "127.0.0.1:0", "--demo-delay", "0", "--workdir", t.TempDir()}, args...)
	return run(ctx, full, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
}

// TestDataDirFormat: the gateway writes DIR/format on the first start, accepts a data dir from before the
// file existed (format 1) and refuses one a newer gateway wrote, naming both formats and what to do.
func TestDataDirFormat(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, "--data-dir", dir)
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	format := filepath.Join(dir, "format")
	if b, err := os.ReadFile(format); err != nil || string(b) != "1\n" {
		t.Fatalf("DIR/format after the first start: %q, %v; want \"1\\n\"", b, err)
	}

	// A data dir of a gateway that wrote no format file is format 1: accepted, and the file written.
	if err := os.Remove(format); err != nil {
		t.Fatal(err)
	}
	g = startGateway(t, "--data-dir", dir)
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(format); err != nil || string(b) != "1\n" {
		t.Fatalf("DIR/format after a start on an older dir: %q, %v; want \"1\\n\"", b, err)
	}

	if err := os.WriteFile(format, []byte("2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := startRefused(t, "--data-dir", dir)
	want := "--data-dir " + dir + " holds data format 2, written by a newer gateway; this gateway (version " + version + ") reads format 1: run the newer gateway on it, or stop and restore a backup taken before the upgrade (docs/deploy.md, \"Back up and restore a data dir\")"
	if err == nil || err.Error() != want {
		t.Errorf("newer format: error %v\nwant  %q", err, want)
	}

	if err := os.WriteFile(format, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = startRefused(t, "--data-dir", dir)
	want = "--data-dir " + dir + `: the format file holds "one", not a data format number; this gateway writes 1 there (if the file was damaged, restore the data dir from a backup)`
	if err == nil || err.Error() != want {
		t.Errorf("garbage format: error %v\nwant  %q", err, want)
	}
}
