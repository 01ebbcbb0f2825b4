package termlogin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// testAgent is internal/testagent, built once: its login mode offers terminal auth methods whose login
// commands are this binary again (-login-code, -login-oauth).
var testAgent string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "termlogin-test-")
	if err != nil {
		panic(err)
	}
	testAgent = filepath.Join(dir, "testagent")
	if out, err := exec.Command("go", "build", "-o", testAgent, "github.com/acp-gateway/gateway/internal/testagent").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test agent: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		// The agents package's spawner (a thread that starts every process) lives as long as the process.
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/acp-gateway/gateway/internal/agents.spawner")); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}
