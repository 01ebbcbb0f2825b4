package ws

import (
	"testing"

	"go.uber.org/goleak"
)

// The agents package's spawner (a thread that starts every agent process) lives as long as the process.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/acp-gateway/gateway/internal/agents.spawner"))
}
