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
	f := NewForming(t, n)
	for i := range n {
		f.Start(i)
	}
	for _, u := range f.URLs {
		Poll(t, "nats-server "+u+" with JetStream ready", 50*time.Millisecond, func() bool { return JetStreamReady(u) })
	}
	return &f.Cluster
}

// Forming is a cluster whose servers the test starts one by one: the start order of an operator whose
// gateways come up before the cluster has formed.
type Forming struct {
	Cluster
	t      testing.TB
	bin    string
	dir    string
	client []int
	routes []string
	cmds   map[int]*exec.Cmd // the running process of each started server
}

// NewForming builds nats-server and reserves the ports of an n-server cluster without starting any server.
func NewForming(t testing.TB, n int) *Forming {
	t.Helper()
	if testing.Short() {
		t.Skip("builds nats-server and runs a JetStream cluster: not under -short")
	}
	bin, err := serverBinary()
	if err != nil {
		t.Fatal(err)
	}
	f := &Forming{t: t, bin: bin, dir: t.TempDir(), client: FreePorts(t, n), cmds: map[int]*exec.Cmd{}}
	for _, p := range FreePorts(t, n) {
		f.routes = append(f.routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	for _, p := range f.client {
		f.URLs = append(f.URLs, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	return f
}

// Start starts server i (it joins whichever others are up), again after Stop on the same store directory;
// it is stopped when the test ends.
func (f *Forming) Start(i int) {
	t := f.t
	t.Helper()
	name := fmt.Sprintf("n%d", i+1)
	logf, err := os.OpenFile(filepath.Join(f.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(f.bin, "-n", name, "-a", "127.0.0.1", "-p", fmt.Sprint(f.client[i]), "-js",
		"-sd", filepath.Join(f.dir, name), "--cluster_name", "acpgw-test",
		"-cluster", f.routes[i], "-routes", strings.Join(f.routes, ","))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.cmds[i] = cmd
	t.Cleanup(func() {
		f.Stop(i)
		_ = logf.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logf.Name()); err == nil {
				t.Logf("%s log (tail):\n%s", name, tail(string(b), 3000))
			}
		}
	})
}

// Stop stops server i (SIGTERM) and waits until it is gone; stopping a stopped server does nothing.
func (f *Forming) Stop(i int) {
	cmd := f.cmds[i]
	if cmd == nil {
		return
	}
	delete(f.cmds, i)
	_ = cmd.Process.Signal(syscall.SIGTERM) // it may have exited already: Wait says so
	_ = cmd.Wait()                          // a server stopped by a signal exits non-zero
}

// JetStreamReady reports whether the server at u answers a JetStream request (its cluster has a meta leader).
func JetStreamReady(u string) bool {
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
