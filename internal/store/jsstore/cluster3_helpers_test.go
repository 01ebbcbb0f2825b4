package jsstore_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsCluster is a real 3-node nats-server cluster on loopback ports, JetStream on, built from the module
// (go build github.com/nats-io/nats-server/v2) into the test's temporary directory.
type natsCluster struct {
	urls []string // client URL of each server
}

// startNATSCluster builds nats-server, starts 3 servers as one cluster and waits until JetStream answers
// with a meta leader. The servers are stopped when the test ends.
func startNATSCluster(t testing.TB) *natsCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("builds nats-server and runs a 3-node JetStream cluster: not under -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "nats-server")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput(); err != nil {
		t.Fatalf("building nats-server: %v\n%s", err, out)
	}
	client, route := freePorts(t, 3), freePorts(t, 3)
	var routes []string
	for _, p := range route {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	c := &natsCluster{}
	for i := range 3 {
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
		c.urls = append(c.urls, fmt.Sprintf("nats://127.0.0.1:%d", client[i]))
	}
	// Ready: each server accepts clients and JetStream has a meta leader (account info answers).
	for _, u := range c.urls {
		poll(t, "nats-server "+u+" with JetStream ready", 50*time.Millisecond, func() bool {
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

// poll checks cond every interval until it holds, failing the test after a bound.
func poll(t testing.TB, what string, interval time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(interval)
	}
}

// freePorts reserves n loopback ports (listens, then releases them for the servers).
func freePorts(t testing.TB, n int) []int {
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
