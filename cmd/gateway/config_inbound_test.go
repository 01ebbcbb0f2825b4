package main

import (
	"io"
	"strings"
	"testing"
)

// TestMaxInboundBytesFlag: the inbound budget is read from the flag or GATEWAY_MAX_INBOUND_BYTES, and one
// smaller than --ws-max-frame (a frame of the largest size could never be read) is refused at startup.
func TestMaxInboundBytesFlag(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := parseConfig([]string{"--workdir", t.TempDir()}, env(nil), io.Discard)
	if err != nil || c.maxInboundBytes != 64<<20 {
		t.Fatalf("default: %v, %v", c, err)
	}
	c, err = parseConfig([]string{"--workdir", t.TempDir(), "--ws-max-frame", "1024"}, env(map[string]string{"GATEWAY_MAX_INBOUND_BYTES": "4096"}), io.Discard)
	if err != nil || c.maxInboundBytes != 4096 {
		t.Fatalf("from the environment: %v, %v", c, err)
	}
	_, err = parseConfig([]string{"--workdir", t.TempDir(), "--max-inbound-bytes", "1000"}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--ws-max-frame") {
		t.Fatalf("a budget below --ws-max-frame: %v", err)
	}
}
