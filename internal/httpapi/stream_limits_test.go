package httpapi

import (
	"testing"

	"github.com/acp-gateway/gateway/internal/eventlog"
)

// TestStreamLimitsFollowConfig: event streams take the lag bounds the gateway is configured with (the
// --ws-queue-* flags), not fixed ones; zero means the documented defaults.
func TestStreamLimitsFollowConfig(t *testing.T) {
	if got := (&Server{StreamQueueFrames: 7, StreamQueueBytes: 9}).streamLimits(); got != (eventlog.FollowLimits{Frames: 7, Bytes: 9}) {
		t.Fatalf("configured: %+v", got)
	}
	if got := (&Server{}).streamLimits(); got != (eventlog.FollowLimits{Frames: 4096, Bytes: 16 << 20}) {
		t.Fatalf("defaults: %+v", got)
	}
}
