package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The deployment drill: docs/deploy.md's walk-through (§9), block by block, from building the package to a
// prompt through nginx whose trace reaches a collector. Each ```sh deploy-walk-… block is read out of the page
// and run with bash; what the test must do differently without root (no apt, no systemd, paths under a
// directory of its own) is a substitution of a documented line, which must be there exactly once.

// deployDocBlock returns the fenced block of docs/deploy.md whose info string is info (exactly one).
func deployDocBlock(t *testing.T, info string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(raw), "\n```"+info+"\n")
	if len(parts) != 2 {
		t.Fatalf("docs/deploy.md has %d ```%s blocks, want 1", len(parts)-1, info)
	}
	block, _, ok := strings.Cut(parts[1], "\n```\n")
	if !ok {
		t.Fatalf("docs/deploy.md: the ```%s block does not end", info)
	}
	return block + "\n"
}

// drillRoot stands for the machine's root directory: the package is unpacked into it and every absolute path
// of the walk-through that the package or the steps write is moved under it.
type drillRoot string

// paths moves the walk-through's system paths under the root and drops sudo (the test runs as itself).
func (r drillRoot) paths(script string) string {
	for _, p := range []string{"/etc/acp-gateway", "/usr/bin/acp-gateway", "/var/lib/acp-gateway"} {
		script = strings.ReplaceAll(script, p, string(r)+p)
	}
	return strings.ReplaceAll(script, "sudo ", "")
}

// runDocScript runs a documented script with bash -euo pipefail in dir and returns its standard output.
func runDocScript(t *testing.T, what, dir, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a safety net: a cold build is minutes
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-s")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(script)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("step %q failed: %v\nscript:\n%s\nstderr:\n%s\nstdout:\n%s", what, err, script, stderr.String(), out)
	}
	return string(out)
}

// unitService is what the test takes from a systemd unit to start its service the way systemd would.
type unitService struct {
	execStart, workDir, envFile string
	env                         []string // Environment= lines, in order
	stateDirs                   []string
}

func parseUnit(t *testing.T, path string) unitService {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var u unitService
	for _, line := range strings.Split(string(raw), "\n") {
		key, val, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		switch key {
		case "ExecStart":
			u.execStart = val
		case "WorkingDirectory":
			u.workDir = val
		case "EnvironmentFile":
			u.envFile = strings.TrimPrefix(val, "-")
		case "Environment":
			u.env = append(u.env, val)
		case "StateDirectory":
			u.stateDirs = append(u.stateDirs, strings.Fields(val)...)
		}
	}
	if u.execStart == "" || u.envFile == "" || len(u.stateDirs) == 0 {
		t.Fatalf("the unit %s lacks ExecStart, EnvironmentFile or StateDirectory: %+v", path, u)
	}
	return u
}

// readEnvFile reads a systemd EnvironmentFile of plain KEY=value lines (comments and blank lines skipped).
func readEnvFile(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.Contains(line, "=") {
			t.Fatalf("%s: not KEY=value: %q", path, line)
		}
		env = append(env, line)
	}
	return env
}

// TestDeployDrill follows docs/deploy.md §9 from a package to a TLS gateway behind nginx with traces in a
// collector: it builds the host's .deb with scripts/release.sh and unpacks it, makes the self-signed
// certificate, writes the settings, starts the packaged binary as the packaged unit would, checks /healthz
// over TLS, runs nginx with §7's configuration and its upstream-TLS lines, sends a prompt through nginx
// with curl, and finds the turn's invoke_agent span at an in-process OTLP receiver. On the way it runs §1's
// binary block, and at the end §4's backup and restore, after which the session answers through nginx.
func TestDeployDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release package (minutes on a cold build cache)")
	}
	needTools(t, "bash", "curl", "jq", "openssl", "git", "go")
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb is not installed (Debian package dpkg): the package cannot be unpacked, the drill is not run")
	}
	nginx := nginxBinary(t)
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.Chmod(work, 0o755); err != nil { // nginx's workers run as nobody when the test runs as root
		t.Fatal(err)
	}
	root := drillRoot(filepath.Join(work, "root"))
	dist := filepath.Join(work, "dist")

	// 1. The package, built for this machine and unpacked in place of apt install.
	pkg := render(t, deployDocBlock(t, "sh deploy-walk-package"),
		"DIST=dist ", "DIST="+dist+" ",
		"sudo apt install ./dist/acp-gateway_*.deb", "mkdir -p "+string(root)+" && dpkg-deb -x "+dist+"/acp-gateway_*.deb "+string(root),
	)
	runDocScript(t, "package", repo, pkg)
	// The package's version, as its binary reports it (the .deb's name spells a pre-release with "~").
	verOut, err := exec.Command(string(root)+"/usr/bin/acp-gateway", "--version").Output()
	if err != nil {
		t.Fatalf("the packaged binary: %v", err)
	}
	version := strings.TrimPrefix(strings.SplitN(string(verOut), "\n", 2)[0], "gateway ")

	// §1's binary: its checksum, installed (under the root) and asked its version.
	binaries, _ := filepath.Glob(filepath.Join(dist, "acp-gateway_*_linux_*"))
	if len(binaries) != 1 {
		t.Fatalf("want one binary in %s: %v", dist, binaries)
	}
	if err := os.MkdirAll(string(root)+"/usr/local/bin", 0o755); err != nil {
		t.Fatal(err)
	}
	install := render(t, deployDocBlock(t, "sh install-binary"),
		"acp-gateway_<version>_linux_amd64", filepath.Base(binaries[0]),
		" /usr/local/bin/acp-gateway\n", " "+string(root)+"/usr/local/bin/acp-gateway\n",
		"\nacp-gateway --version", "\n"+string(root)+"/usr/local/bin/acp-gateway --version",
	)
	if out := runDocScript(t, "install the binary", dist, strings.ReplaceAll(install, "sudo ", "")); !strings.Contains(out, ": OK\n") || !strings.Contains(out, "\ngateway "+version+"\n") {
		t.Fatalf("the binary's checksum and version:\n%s", out)
	}

	// 2. The certificate, with the test's own group in place of ssl-cert.
	cert := root.paths(render(t, deployDocBlock(t, "sh deploy-walk-cert"), "sudo apt install ssl-cert\n", ""))
	cert = strings.ReplaceAll(cert, "ssl-cert", fmt.Sprint(os.Getgid()))
	runDocScript(t, "certificate", work, cert)
	certFile := string(root) + "/etc/acp-gateway/tls/fullchain.pem"
	pool := x509.NewCertPool()
	if pemBytes, err := os.ReadFile(certFile); err != nil || !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("the certificate step wrote no certificate: %v", err)
	}
	if fi, err := os.Stat(string(root) + "/etc/acp-gateway/tls/privkey.pem"); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("the key's mode: %v %v, want 0640", fi.Mode(), err)
	}

	// 3. The settings: a free port for the gateway and the test's collector.
	rc := newOTLPReceiver(t)
	gwPort := freePort(t)
	env := root.paths(render(t, deployDocBlock(t, "sh deploy-walk-env"),
		"GATEWAY_ADDR=127.0.0.1:8443\n", "GATEWAY_ADDR=127.0.0.1:"+gwPort+"\n",
		"http://collector.internal:4318", rc.srv.URL,
	))
	runDocScript(t, "settings", work, env)
	if dropin := deployDocBlock(t, "ini deploy-walk-dropin"); !strings.Contains(dropin, "\n[Service]\nSupplementaryGroups=ssl-cert\n") {
		t.Fatalf("the drop-in changed; the test runs as its own user and group:\n%s", dropin)
	}

	// 4. Start the service as the packaged unit would, and ask /healthz over TLS.
	start := deployDocBlock(t, "sh deploy-walk-start")
	start = render(t, start, "sudo systemctl enable --now acp-gateway\n", "")
	start = root.paths(strings.ReplaceAll(start, "8443", gwPort))
	svc := startUnitService(t, root)
	health := runDocScript(t, "start", work, start)
	for _, want := range []string{`"status":"ok"`, `"version":"` + version + `"`} {
		if !strings.Contains(health, want) {
			t.Fatalf("/healthz over TLS: %s\nwant %s", health, want)
		}
	}

	// §6's certbot hook renews the pair (a second self-signed one as the lineage); the gateway serves it.
	pool = renewWithHook(t, root, work, svc, gwPort)

	// 5. nginx in front, with §7's configuration made as the walk-through says.
	if nginxSteps := deployDocBlock(t, "sh deploy-walk-nginx"); nginxSteps != "sudo apt install nginx\nsudo nginx -t && sudo systemctl reload nginx\n" {
		t.Fatalf("the nginx step changed; the test runs nginx -t and nginx itself:\n%s", nginxSteps)
	}
	nginxPort := freePort(t)
	upstreamTLS := root.paths(proxyDocBlock(t, "nginx upstream-tls"))
	site := render(t, proxyDocBlock(t, "nginx"),
		"listen 443 ssl http2;", "listen 127.0.0.1:"+nginxPort+" ssl http2;",
		"/etc/ssl/certs/gateway.example.com.pem", certFile,
		"/etc/ssl/private/gateway.example.com.key", string(root)+"/etc/acp-gateway/tls/privkey.pem",
		"    server 127.0.0.1:8080;\n", "    server 127.0.0.1:"+gwPort+";\n",
		"        proxy_pass http://acp_gateway;\n", upstreamTLS,
	)
	nginxDir := filepath.Join(work, "nginx")
	if err := os.Mkdir(nginxDir, 0o755); err != nil {
		t.Fatal(err)
	}
	proxy := runNginx(t, nginx, nginxDir, site, nginxPort, pool, "gateway.example.com")

	// 6. A prompt through nginx over HTTPS.
	prompt := root.paths(render(t, deployDocBlock(t, "sh deploy-walk-prompt"),
		"gw() { curl -sf ", "gw() { curl -sf --resolve gateway.example.com:"+nginxPort+":127.0.0.1 ",
	))
	prompt = strings.ReplaceAll(prompt, "https://gateway.example.com/", "https://gateway.example.com:"+nginxPort+"/")
	out := runDocScript(t, "prompt", work, prompt)
	m := regexp.MustCompile(`^\{"status":"ended","stopReason":"end_turn","text":"You said: quick"\}\nsession (\S+)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the prompt through nginx printed:\n%s\ngateway:\n%s", out, svc.logs.String())
	}
	sessionID := m[1]

	// 7. The trace: stopped as systemctl stop does, the gateway has sent every span.
	svc.stop(t)
	spans, resources, bad := rc.snapshot()
	if len(bad) > 0 {
		t.Fatalf("the collector could not read: %q", bad)
	}
	if attrOf(resources, "service.name") != "acp-gateway" || attrOf(resources, "service.version") != version {
		t.Errorf("resource service.name %q service.version %q, want acp-gateway %s",
			attrOf(resources, "service.name"), attrOf(resources, "service.version"), version)
	}
	var turn *tracepb.Span
	for _, sp := range spansNamed(spans, "invoke_agent demo") {
		if attr(sp, "gen_ai.conversation.id") == sessionID {
			turn = sp
		}
	}
	if turn == nil {
		t.Fatalf("no invoke_agent demo span of session %s among %d spans", sessionID, len(spans))
	}
	if attr(turn, "gen_ai.response.finish_reasons") != "end_turn" {
		t.Errorf("invoke_agent finish_reasons %q, want end_turn", attr(turn, "gen_ai.response.finish_reasons"))
	}
	var parent *tracepb.Span
	for _, sp := range spansNamed(spans, "POST /v1/sessions/{id}/prompt") {
		if hexID(sp.GetSpanId()) == hexID(turn.GetParentSpanId()) {
			parent = sp
		}
	}
	if parent == nil {
		t.Fatal("invoke_agent demo is not a child of a POST /v1/sessions/{id}/prompt span")
	}
	if parent.GetKind() != tracepb.Span_SPAN_KIND_SERVER || attr(parent, "url.scheme") != "https" || attr(parent, "client.address") != "127.0.0.1" {
		t.Errorf("the prompt's server span: kind %v, attributes %v; want SERVER, url.scheme https, client.address 127.0.0.1",
			parent.GetKind(), parent.GetAttributes())
	}

	// 8. §4's backup and restore, and the session again through nginx.
	backupAndRestore(t, root, work, sessionID, proxy)
}

// renewWithHook runs §6's certbot deploy hook with a new pair as the renewed lineage and kill -HUP for
// systemctl reload, waits for the gateway's reload, checks it serves the new certificate and returns a pool
// trusting it.
func renewWithHook(t *testing.T, root drillRoot, work string, svc *unitProc, gwPort string) *x509.CertPool {
	t.Helper()
	lineage := filepath.Join(work, "lineage")
	if err := os.Mkdir(lineage, 0o700); err != nil {
		t.Fatal(err)
	}
	runDocScript(t, "renewed lineage", lineage, "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 "+
		"-subj /CN=gateway.example.com -addext subjectAltName=DNS:gateway.example.com -keyout privkey.pem -out fullchain.pem 2>/dev/null\n")
	hook := render(t, deployDocBlock(t, "sh certbot-hook"), "systemctl reload acp-gateway\n", fmt.Sprintf("kill -HUP %d\n", svc.cmd.Process.Pid))
	hook = strings.ReplaceAll(root.paths(hook), "ssl-cert", fmt.Sprint(os.Getgid()))
	reloadedBefore := strings.Count(svc.logs.String(), "tls certificate reloaded")
	cmd := exec.Command("bash", "-euo", "pipefail", "-s")
	cmd.Stdin = strings.NewReader(hook)
	cmd.Env = append(os.Environ(), "RENEWED_LINEAGE="+lineage)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the certbot hook: %v\n%s\n%s", err, hook, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(svc.logs.String(), "tls certificate reloaded") == reloadedBefore {
		select {
		case <-svc.exited:
			t.Fatalf("the service exited on SIGHUP: %v\n%s", svc.err, svc.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not reload the pair within 30s:\n%s", svc.logs.String())
		}
	}
	renewed, err := os.ReadFile(filepath.Join(lineage, "fullchain.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(renewed) {
		t.Fatal("the renewed lineage holds no certificate")
	}
	conn, err := tls.Dial("tcp", "127.0.0.1:"+gwPort, &tls.Config{RootCAs: pool, ServerName: "gateway.example.com"})
	if err != nil {
		t.Fatalf("the gateway after the hook does not serve the renewed certificate: %v", err)
	}
	conn.Close()
	return pool
}

// backupAndRestore runs §4's backup and restore blocks on the stopped service (the state under root, not
// /var/lib/private), starts the service again and, through nginx, finds session id detached and prompts it.
func backupAndRestore(t *testing.T, root drillRoot, work, id string, nginx *nginxProc) {
	t.Helper()
	noSystemctl := func(block string) string {
		block = render(t, block, "sudo systemctl stop acp-gateway\n", "", "sudo systemctl start acp-gateway\n", "")
		return strings.ReplaceAll(strings.ReplaceAll(block, "/var/lib/private", string(root)+"/var/lib"), "sudo ", "")
	}
	runDocScript(t, "backup", work, noSystemctl(deployDocBlock(t, "sh backup")))
	tarballs, _ := filepath.Glob(filepath.Join(work, "acp-gateway-*.tar.gz"))
	if len(tarballs) != 1 {
		t.Fatalf("the backup made %v", tarballs)
	}
	restore := render(t, noSystemctl(deployDocBlock(t, "sh restore")), "acp-gateway-2026-12-01.tar.gz", filepath.Base(tarballs[0]))
	runDocScript(t, "restore", work, restore)

	svc := startUnitService(t, root)
	var token string
	for _, kv := range readEnvFile(t, string(root)+"/etc/acp-gateway/env") {
		if v, ok := strings.CutPrefix(kv, "GATEWAY_TOKEN="); ok {
			token = v
		}
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: nginx.pool, ServerName: nginx.serverName}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	c := &proxyClient{base: nginx.base, http: &http.Client{Transport: contractTransport{next: tr}}}
	auth := map[string]string{"Authorization": "Bearer " + token}
	var s sessionJSON
	if resp, body := c.do(t, "GET", "/v1/sessions/"+id, "", auth); resp.StatusCode != http.StatusOK || json.Unmarshal(body, &s) != nil || s.Status != "detached" {
		t.Fatalf("the restored session through nginx: %d %s\n%s", resp.StatusCode, body, svc.logs.String())
	}
	var turn struct{ StopReason string }
	if resp, body := c.do(t, "POST", "/v1/sessions/"+id+"/prompt?wait=true", `{"text":"quick"}`, auth); resp.StatusCode != http.StatusOK || json.Unmarshal(body, &turn) != nil || turn.StopReason != "end_turn" {
		t.Fatalf("a prompt to the restored session: %d %s", resp.StatusCode, body)
	}
	svc.stop(t)
}

// unitProc is the packaged binary run as its unit would run it.
type unitProc struct {
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
	err    error // set before exited closes
}

// startUnitService runs the unit's ExecStart (moved under root) with the unit's Environment= lines, then
// the env file's (which win, as under systemd), in its StateDirectory and WorkingDirectory, and waits for
// the start-up line.
func startUnitService(t *testing.T, root drillRoot) *unitProc {
	t.Helper()
	u := parseUnit(t, string(root)+"/usr/lib/systemd/system/acp-gateway.service")
	for _, d := range u.stateDirs {
		if err := os.MkdirAll(filepath.Join(string(root), "var", "lib", d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"} // systemd's default
	for _, kv := range u.env {
		env = append(env, root.paths(kv))
	}
	env = append(env, readEnvFile(t, root.paths(u.envFile))...)
	args := strings.Fields(root.paths(u.execStart))
	p := &unitProc{logs: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Env = env
	p.cmd.Dir = root.paths(u.workDir)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", args[0], err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop(t) })
	deadline := time.Now().Add(60 * time.Second)
	for !listenRE.MatchString(p.logs.String()) {
		select {
		case <-p.exited:
			t.Fatalf("the service exited: %v\n%s", p.err, p.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service did not log its address within 60s:\n%s", p.logs.String())
		}
	}
	if !strings.Contains(p.logs.String(), "traces on: exporting OTLP") {
		t.Fatalf("the service did not turn traces on:\n%s", p.logs.String())
	}
	return p
}

// stop is systemctl stop: SIGTERM, and the service must end cleanly.
func (p *unitProc) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("the service did not stop cleanly: %v\n%s", p.err, p.logs.String())
		}
	case <-time.After(30 * time.Second): // the unit's TimeoutStopSec
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("the service did not stop within 30s:\n%s", p.logs.String())
	}
}
