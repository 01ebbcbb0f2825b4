package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"github.com/coder/websocket"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	serverName           string // the name its certificate is checked against ("" for the address)
}

// TestNginxProxy: the nginx configuration of docs/deploy.md §7, run by a real nginx over TLS in front of two
// gateways, carries every face, keeps each client on its node by cookie, passes the client's address, strips a
// client's own SSO header, and lets clients resume without loss after nginx went away and came back.
func TestNginxProxy(t *testing.T) {
	bin := nginxBinary(t)
	gws, addrs := proxyGateways(t)
	n := startNginx(t, bin, addrs, nil)
	exerciseProxy(t, n, n.base, n.pool, gws)
}

// TestNginxProxySSO: the documented SSO variant, with a stand-in authentication service: nginx asks it about
// every request, the user it names reaches the gateway as X-Forwarded-User (a principal of its own, on REST
// and on the session WebSocket), a request it refuses never reaches the gateway, and a client's own header
// naming someone else is overwritten.
func TestNginxProxySSO(t *testing.T) {
	bin := nginxBinary(t)
	_, addrs := proxyGateways(t)
	auth := ssoService(t)
	n := startNginx(t, bin, addrs, func(site string) string {
		return render(t, site,
			"        proxy_set_header X-Forwarded-User \"\";\n", proxyDocBlock(t, "nginx sso-user"),
			"    location / {\n", render(t, proxyDocBlock(t, "nginx sso-check"), "127.0.0.1:4180", auth)+"\n    location / {\n",
		)
	})
	exerciseSSO(t, n.base, n.pool)
}

// ssoService starts the stand-in for oauth2-proxy that the SSO tests put behind the proxy: the user is whoever
// X-Test-User names (202 and X-Auth-Request-User); without it, 401. It returns its host:port.
func ssoService(t *testing.T) string {
	t.Helper()
	auth := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-Test-User"); u != "" {
			w.Header().Set("X-Auth-Request-User", u)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go auth.Serve(l)
	t.Cleanup(func() { auth.Close() })
	return l.Addr().String()
}

// exerciseSSO checks an SSO proxy at base: a request its service refuses never reaches the gateway, the user it
// names is the principal on REST and on the session WebSocket (over a header the client sent itself), and
// another user does not see that user's session.
func exerciseSSO(t *testing.T, base string, pool *x509.CertPool) {
	t.Helper()
	c := newProxyClient(t, base, "127.0.0.2", pool, newJar(t))
	ann := map[string]string{"X-Test-User": "ann", "X-Forwarded-User": "admin-ish"}
	// The proxy answers this one itself (a page of its own, which openapi.yaml does not describe): a plain
	// client. Naming a user in the gateway's header does not get past the service.
	req, _ := http.NewRequest("GET", base+"/v1/me", nil)
	req.Header.Set("X-Forwarded-User", "mallory")
	refused, err := c.ws.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	refused.Body.Close()
	if refused.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a login: %d", refused.StatusCode)
	}
	resp, body := c.do(t, "GET", "/v1/me", "", ann)
	var me struct{ ID, Via string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &me) != nil || me.ID != "ann" || me.Via != "proxy" {
		t.Fatalf("/v1/me as ann through the proxy: %d %s", resp.StatusCode, body)
	}
	resp, body = c.do(t, "POST", "/v1/sessions", `{}`, ann)
	var sess sessionJSON
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &sess) != nil {
		t.Fatalf("a session for ann: %d %s", resp.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(base, "https", "wss", 1)+"/v1/sessions/"+sess.ID+"/ws?after=0",
		&websocket.DialOptions{HTTPClient: c.ws, HTTPHeader: http.Header{"X-Test-User": {"ann"}}})
	if err != nil {
		t.Fatalf("ann's session socket through the proxy: %v", err)
	}
	defer conn.CloseNow()
	replay := readLog(t, ctx, conn, 0, false)
	if resp, body := c.do(t, "POST", "/v1/sessions/"+sess.ID+"/prompt", `{"text":"quick"}`, ann); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ann's prompt: %d %s", resp.StatusCode, body)
	}
	if len(readLog(t, ctx, conn, uint64(len(replay)), true)) == 0 {
		t.Fatal("ann's socket streamed no frame of her turn")
	}
	// Another user of the same proxy does not see ann's session.
	if resp, body := c.do(t, "GET", "/v1/sessions/"+sess.ID, "", map[string]string{"X-Test-User": "bob"}); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("bob reading ann's session: %d %s", resp.StatusCode, body)
	}
}

// nginxBinary is Debian's nginx, or a skip that says what is not tested.
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"nginx", "/usr/sbin/nginx"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	t.Skip("nginx is not installed (Debian package nginx; scripts/test.sh installs it): the nginx configuration of docs/deploy.md is not exercised")
	return ""
}

// startNginx renders the documented configuration for two gateways at addrs (edit, if not nil, changes the
// rendered site further) and runs nginx with it over TLS on a free loopback port, stopped at cleanup.
func startNginx(t *testing.T, bin string, addrs []string, edit func(string) string) *nginxProc {
	t.Helper()
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
	if edit != nil {
		site = edit(site)
	}
	return runNginx(t, bin, dir, site, port, pool, "")
}

// runNginx runs nginx with site (a conf.d file) on 127.0.0.1:port, its files in dir, until cleanup; pool and
// serverName ("" for the address) are what a client checks its certificate with.
func runNginx(t *testing.T, bin, dir, site, port string, pool *x509.CertPool, serverName string) *nginxProc {
	t.Helper()
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
	n := &nginxProc{bin: bin, dir: dir, conf: confFile, base: "https://127.0.0.1:" + port, pool: pool, serverName: serverName}
	n.start(t)
	t.Cleanup(func() { n.stop(t) })
	return n
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
	waitProxyUp(t, n.base, &tls.Config{RootCAs: n.pool, ServerName: n.serverName}, n.exited, n.logs)
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
