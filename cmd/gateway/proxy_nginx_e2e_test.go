package main

import (
	"bytes"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// nginxProc is a real nginx run as a child process: its pid, logs and temporary files in its own directory.
type nginxProc struct {
	bin, dir, conf, base string
	cmd                  *exec.Cmd
	exited               chan struct{}
	mu                   sync.Mutex
	out                  bytes.Buffer // Guarded by mu.
	pool                 *x509.CertPool
}

// TestNginxProxy: the nginx configuration of docs/deploy.md §6, run by a real nginx over TLS in front of two
// gateways, carries every face, keeps each client on its node by cookie, passes the client's address, strips a
// client's own SSO header, and lets clients resume without loss after nginx went away and came back.
func TestNginxProxy(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (Debian package nginx; scripts/test.sh installs it): the nginx configuration of docs/deploy.md is not exercised")
		}
	}
	gws, addrs := proxyGateways(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // nginx's workers run as nobody when the test runs as root
		t.Fatal(err)
	}
	cert, key, pool := testCert(t, dir)
	port := freePort(t)
	site := render(t, proxyDocBlock(t, "nginx"),
		"listen 443 ssl http2;", "listen 127.0.0.1:"+port+" ssl http2;",
		"/etc/ssl/certs/gateway.example.com.pem", cert,
		"/etc/ssl/private/gateway.example.com.key", key,
		"    server 127.0.0.1:8080;\n", "    server "+addrs[0]+";\n    server "+addrs[1]+";\n",
	)
	// The documented file goes in nginx's http block (conf.d): the test gives it one of its own, with every path
	// in its directory.
	conf := "worker_processes 1;\npid " + dir + "/nginx.pid;\nerror_log " + dir + "/error.log info;\n" +
		"events { worker_connections 512; }\nhttp {\n" +
		"access_log " + dir + "/access.log;\n" +
		"client_body_temp_path " + dir + "/client_body;\nproxy_temp_path " + dir + "/proxy;\n" +
		"fastcgi_temp_path " + dir + "/fastcgi;\nuwsgi_temp_path " + dir + "/uwsgi;\nscgi_temp_path " + dir + "/scgi;\n" +
		site + "}\n"
	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-p", dir, "-e", dir+"/error.log", "-c", confFile, "-t").CombinedOutput(); err != nil {
		t.Fatalf("nginx -t refuses the documented configuration: %v\n%s\n%s", err, out, conf)
	}
	n := &nginxProc{bin: bin, dir: dir, conf: confFile, base: "https://127.0.0.1:" + port, pool: pool}
	n.start(t)
	t.Cleanup(func() { n.stop(t) })
	exerciseProxy(t, n, n.base, pool, gws)
}

func (n *nginxProc) logs() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	errLog, _ := os.ReadFile(filepath.Join(n.dir, "error.log"))
	return n.out.String() + string(errLog)
}

func (n *nginxProc) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.out.Write(p)
}

func (n *nginxProc) start(t *testing.T) {
	t.Helper()
	n.cmd = exec.Command(n.bin, "-p", n.dir, "-e", n.dir+"/error.log", "-c", n.conf, "-g", "daemon off;")
	n.cmd.Stdout, n.cmd.Stderr = n, n
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("starting nginx: %v", err)
	}
	n.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(n.cmd, n.exited)
	waitProxyUp(t, n.base, n.pool, n.exited, n.logs)
}

// drop is nginx's fast shutdown (SIGTERM): the master ends its workers and every connection through them.
func (n *nginxProc) drop(t *testing.T) {
	t.Helper()
	n.stop(t)
}

func (n *nginxProc) stop(t *testing.T) {
	t.Helper()
	if n.cmd == nil {
		return
	}
	select {
	case <-n.exited:
		return
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(20 * time.Second):
		_ = n.cmd.Process.Kill()
		t.Errorf("nginx did not stop within 20s:\n%s", n.logs())
		<-n.exited
	}
}
