package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// caddyProc is a real Caddy run as a child process, its state (HOME, XDG dirs) in its own directory.
type caddyProc struct {
	bin, dir, conf, base string
	pool                 *x509.CertPool
	cmd                  *exec.Cmd
	exited               chan struct{}
	mu                   sync.Mutex
	out                  bytes.Buffer // Guarded by mu.
}

// TestCaddyProxy: the Caddyfile of docs/deploy.md §7, run by a real Caddy over TLS in front of two gateways,
// carries every face, keeps each client on its node by cookie (lb_policy cookie), passes the client's address,
// strips a client's own SSO header, and lets clients resume without loss after Caddy went away and came back.
// CADDY names the binary (default: caddy on the PATH, Debian's package).
func TestCaddyProxy(t *testing.T) {
	bin := caddyBinary(t)
	gws, addrs := proxyGateways(t)
	c := startCaddy(t, bin, addrs, nil)
	exerciseProxy(t, c, c.base, c.pool, gws)
}

// TestCaddyProxySSO: the documented SSO variant of the Caddyfile (forward_auth), with the stand-in
// authentication service of TestNginxProxySSO and the same checks.
func TestCaddyProxySSO(t *testing.T) {
	bin := caddyBinary(t)
	_, addrs := proxyGateways(t)
	auth := ssoService(t)
	c := startCaddy(t, bin, addrs, func(site string) string {
		sso := render(t, proxyDocBlock(t, "caddyfile sso"), "127.0.0.1:4180", auth)
		site = render(t, site, "\t\t# No SSO here: a client's own X-Forwarded-User never reaches the gateway.\n\t\theader_up -X-Forwarded-User\n", "")
		return render(t, site, "\treverse_proxy ", sso+"\treverse_proxy ")
	})
	exerciseSSO(t, c.base, c.pool)
}

// caddyBinary is $CADDY, else caddy on the PATH (Debian's package), else a skip that says what is not tested.
func caddyBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("CADDY"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("caddy")
	if err != nil {
		t.Skip("caddy is not installed (Debian package caddy; scripts/test.sh installs it): the Caddyfile of docs/deploy.md is not exercised")
	}
	return bin
}

// startCaddy renders the documented Caddyfile for two gateways at addrs (edit, if not nil, changes the
// rendered site further) and runs Caddy with it over TLS on a free loopback port, stopped at cleanup.
func startCaddy(t *testing.T, bin string, addrs []string, edit func(string) string) *caddyProc {
	t.Helper()
	dir := t.TempDir()
	cert, key, pool := testCert(t, dir)
	port := freePort(t)
	site := render(t, proxyDocBlock(t, "caddyfile"),
		"gateway.example.com {\n", "https://127.0.0.1:"+port+" {\n\ttls "+cert+" "+key+"\n",
		"reverse_proxy 127.0.0.1:8080 {", "reverse_proxy "+addrs[0]+" "+addrs[1]+" {",
	)
	if edit != nil {
		site = edit(site)
	}
	// The global options keep the test's Caddy to itself: no admin endpoint (another Caddy may hold :2019), no
	// HTTP->HTTPS redirect listener on :80, its storage in its directory.
	conf := "{\n\tadmin off\n\tauto_https disable_redirects\n\tstorage file_system " + dir + "/data\n}\n\n" + site
	confFile := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &caddyProc{bin: bin, dir: dir, conf: confFile, base: "https://127.0.0.1:" + port, pool: pool}
	if out, err := c.command("validate", "--config", confFile, "--adapter", "caddyfile").CombinedOutput(); err != nil {
		t.Fatalf("caddy validate refuses the documented Caddyfile: %v\n%s\n%s", err, out, conf)
	}
	c.start(t)
	t.Cleanup(func() { c.drop(t) })
	return c
}

// command is caddy with its HOME and XDG directories in the test's directory.
func (c *caddyProc) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+c.dir, "XDG_DATA_HOME="+c.dir+"/data", "XDG_CONFIG_HOME="+c.dir+"/config")
	return cmd
}

func (c *caddyProc) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *caddyProc) logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

func (c *caddyProc) start(t *testing.T) {
	t.Helper()
	c.cmd = c.command("run", "--config", c.conf, "--adapter", "caddyfile")
	c.cmd.Stdout, c.cmd.Stderr = c, c
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("starting caddy: %v", err)
	}
	c.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(c.cmd, c.exited)
	waitProxyUp(t, c.base, &tls.Config{RootCAs: c.pool}, c.exited, c.logs)
}

// drop kills Caddy (one process): every connection through it ends at once.
func (c *caddyProc) drop(t *testing.T) {
	t.Helper()
	if c.cmd == nil {
		return
	}
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Kill()
	select {
	case <-c.exited:
	case <-time.After(20 * time.Second):
		t.Errorf("caddy did not exit within 20s of SIGKILL")
	}
}
