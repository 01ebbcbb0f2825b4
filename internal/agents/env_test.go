package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentGetsOnlyItsEnvironment: an agent started with an empty allowlisted environment gets no variable
// of the gateway's own (an empty list once meant "inherit everything"), only the gateway's process markers.
func TestAgentGetsOnlyItsEnvironment(t *testing.T) {
	t.Setenv("ACP_GATEWAY_TEST_CANARY", "gateway-secret")
	envFile := filepath.Join(t.TempDir(), "env")
	c, err := Start(Spec{Name: "ta", Kind: KindACP, Command: testAgent, Args: []string{"-mode", "stubborn", "-env-file", envFile}},
		Options{Cwd: t.TempDir(), Handler: newRecorder(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	var env []byte
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if env, err = os.ReadFile(envFile); err == nil && len(env) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never wrote its environment")
		}
	}
	for _, kv := range strings.Split(string(env), "\n") {
		if !strings.HasPrefix(kv, MarkerVar+"=") && !strings.HasPrefix(kv, OwnerVar+"=") {
			t.Errorf("the agent got %q, which nobody allowed", kv)
		}
	}
}
