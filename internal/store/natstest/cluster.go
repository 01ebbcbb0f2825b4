package natstest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is a real nats-server cluster on loopback ports, JetStream on, built from the module
// (go build github.com/nats-io/nats-server/v2) into the test's temporary directory: mode c's engine as
// operators run it.
type Cluster struct {
	URLs []string // client URL of each server, in order
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// serverBinary builds nats-server once per test process, into a directory named after the module's version
// that later test processes reuse (a build takes seconds even from the build cache).
func serverBinary() (string, error) {
	buildOnce.Do(func() {
		version := "unknown" // test binaries carry no module list: ask go
		if out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/nats-io/nats-server/v2").Output(); err == nil {
			version = strings.TrimSpace(string(out))
		}
		dir := filepath.Join(os.TempDir(), "acpgw-natstest", "nats-server-"+version)
		binPath = filepath.Join(dir, "nats-server")
		if _, err := os.Stat(binPath); err == nil && version != "unknown" {
			return
		}
		if buildErr = os.MkdirAll(dir, 0o755); buildErr != nil {
			return
		}
		tmp := fmt.Sprintf("%s.%d", binPath, os.Getpid())
		if out, err := exec.Command("go", "build", "-o", tmp, "github.com/nats-io/nats-server/v2").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building nats-server: %v\n%s", err, out)
			return
		}
		buildErr = os.Rename(tmp, binPath) // atomic: a concurrent test process sees a whole binary or none
	})
	return binPath, buildErr
}

// StartCluster builds nats-server, starts n servers as one cluster and waits until each answers JetStream
// requests (a meta leader exists). The servers are stopped when the test ends; their logs are printed if it
// failed. Skipped under -short.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("builds nats-server and runs a JetStream cluster: not under -short")
	}
	bin, err := serverBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	client, route := FreePorts(t, n), FreePorts(t, n)
	var routes []string
	for _, p := range route {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	c := &Cluster{}
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		logf, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-n", name, "-a", "127.0.0.1", "-p", fmt.Sprint(client[i]), "-js",
			"-sd", filepath.Join(dir, name), "--cluster_name", "acpgw-test",
			"-cluster", routes[i], "-routes", strings.Join(routes, ","))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			_ = logf.Close()
			if t.Failed() {
				if b, err := os.ReadFile(logf.Name()); err == nil {
					t.Logf("%s log (tail):\n%s", name, tail(string(b), 3000))
				}
			}
		})
		c.URLs = append(c.URLs, fmt.Sprintf("nats://127.0.0.1:%d", client[i]))
	}
	for _, u := range c.URLs {
		Poll(t, "nats-server "+u+" with JetStream ready", 50*time.Millisecond, func() bool {
			nc, err := nats.Connect(u, nats.Timeout(time.Second))
			if err != nil {
				return false
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				return false
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err = js.AccountInfo(ctx)
			return err == nil
		})
	}
	return c
}

// Poll checks cond every interval until it holds, failing the test after two minutes.
func Poll(t testing.TB, what string, interval time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(interval)
	}
}

// FreePorts reserves n loopback ports (listens, then releases them for the servers).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
