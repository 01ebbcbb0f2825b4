package packaging

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// podmanRunFlags are what `podman run` needs on the CI machine (Debian 12's podman 4.3.1 in a VM): runc, as
// crun refuses its hybrid cgroups; cgroupfs, as there is no systemd; the host's network, as netavark cannot
// set one up; and ulimits below conmon's own (podman raises them for root otherwise, and the VM refuses).
// PODMAN_RUN_FLAGS replaces them where podman runs as shipped (set it to a space).
var podmanRunFlags = []string{"--runtime", "runc", "--cgroup-manager", "cgroupfs", "--network", "host",
	"--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"}

// TestContainerImage builds the image of packaging/Containerfile with scripts/container.sh and podman, and
// runs it: a non-root user, the state in a volume (a session outlives the container), the HEALTHCHECK
// (gateway healthcheck) healthy, /healthz answering with the stamped version, a clean stop on SIGTERM.
func TestContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release binary and an image")
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman is not installed (Debian package podman): the container image is not built or run")
	}
	build, runLine, check := containerDocBlock(t)
	suffix := randomHex(t)
	image := "localhost/acp-gateway-test:" + suffix
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", build)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "IMAGE="+image, "VERSION="+releaseVersion)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	t.Cleanup(func() { podmanOut(t, podman, "rmi", "-f", image) })
	if strings.TrimSpace(string(out)) != image {
		t.Fatalf("container.sh printed %q, want the image %s", out, image)
	}

	var cfg []struct {
		Config struct {
			User    string
			Volumes map[string]any
		}
		Healthcheck struct{ Test []string } // podman reports it beside Config
	}
	if err := json.Unmarshal([]byte(podmanOut(t, podman, "image", "inspect", image)), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("image inspect: %v", err)
	}
	c, hc := cfg[0].Config, cfg[0].Healthcheck.Test
	if c.User != "65532:65532" || c.Volumes["/var/lib/acp-gateway"] == nil || strings.Join(hc, " ") != "CMD /usr/bin/acp-gateway healthcheck" {
		t.Fatalf("image config: user %q volumes %v healthcheck %q", c.User, c.Volumes, hc)
	}

	volume := "acp-gateway-test-" + suffix
	t.Cleanup(func() { podmanOut(t, podman, "volume", "rm", "-f", volume) })
	flags := strings.Join(podmanRunFlags, " ")
	if v, ok := os.LookupEnv("PODMAN_RUN_FLAGS"); ok {
		flags = v
	}
	// Host networking: the gateway gets a free loopback port of its own rather than the image's 0.0.0.0:8080.
	addr := "127.0.0.1:" + freePort(t)
	token := randomHex(t) + randomHex(t)
	run := func(name string) string {
		t.Helper()
		line := render(t, runLine,
			"podman run -d ", "podman run -d "+flags+" -e GATEWAY_ADDR="+addr+" ",
			"--name acp-gateway ", "--name "+name+" ",
			" -p 8080:8080", "",
			" -v acp-gateway:", " -v "+volume+":",
			"$(openssl rand -hex 32)", token,
			"localhost/acp-gateway:<version>", image,
		)
		if out, err := exec.Command("bash", "-euo", "pipefail", "-c", line).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		t.Cleanup(func() { podmanOut(t, podman, "rm", "--force", "--ignore", name) })
		waitHealthy(t, podman, name, "http://"+addr)
		return name
	}

	first := run("acp-gateway-test-" + suffix)
	// The documented check: podman schedules health checks with systemd timers, which a machine without
	// systemd lacks, so `podman healthcheck run` runs one (and exits 1 when unhealthy).
	checkLine := render(t, check, "healthcheck run acp-gateway ", "healthcheck run "+first+" ", "http://127.0.0.1:8080/", "http://"+addr+"/")
	health, err := exec.Command("bash", "-euo", "pipefail", "-c", checkLine).CombinedOutput()
	if err != nil || !strings.Contains(string(health), `"status":"ok"`) || !strings.Contains(string(health), `"version":"`+releaseVersion+`"`) {
		t.Fatalf("%s: %v\n%s", checkLine, err, health)
	}
	if st := strings.TrimSpace(podmanOut(t, podman, "inspect", "--format", "{{.State.Health.Status}}", first)); st != "healthy" {
		t.Fatalf("health after podman healthcheck run: %q", st)
	}
	id := apiDo(t, "POST", "http://"+addr+"/v1/sessions", token, `{}`)["id"].(string)
	if turn := apiDo(t, "POST", "http://"+addr+"/v1/sessions/"+id+"/prompt?wait=true", token, `{"text":"quick"}`); turn["stopReason"] != "end_turn" {
		t.Fatalf("prompt in the container: %v", turn)
	}
	podmanOut(t, podman, "stop", "-t", "30", first)
	if code := strings.TrimSpace(podmanOut(t, podman, "inspect", "--format", "{{.State.ExitCode}}", first)); code != "0" {
		t.Fatalf("the gateway's exit code on podman stop: %s\n%s", code, podmanOut(t, podman, "logs", first))
	}
	podmanOut(t, podman, "rm", first)

	// A new container on the same volume has the session: the state lives in the volume.
	run("acp-gateway-test-2-" + suffix)
	if s := apiDo(t, "GET", "http://"+addr+"/v1/sessions/"+id, token, ""); s["id"] != id {
		t.Fatalf("the session after the container was replaced: %v", s)
	}
}

// containerDocBlock returns the three commands of docs/deploy.md's ```sh container block: the build, the run
// (one command over two lines) and the check.
func containerDocBlock(t *testing.T) (build, run, check string) {
	t.Helper()
	raw, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n```sh container\n")
	block, _, ok2 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("docs/deploy.md has no ```sh container block")
	}
	cmds := strings.Split(strings.ReplaceAll(block, "\\\n", ""), "\n")
	if len(cmds) != 3 {
		t.Fatalf("the ```sh container block holds %d commands, want 3 (build, run, check):\n%s", len(cmds), block)
	}
	return cmds[0], cmds[1], cmds[2]
}

// render replaces each old string of a documented command, which must be there exactly once.
func render(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if n := strings.Count(s, pairs[i]); n != 1 {
			t.Fatalf("the documented command holds %q %d times, want once:\n%s", pairs[i], n, s)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// waitHealthy polls /healthz (bounded) until the container's gateway answers; a container that exits fails.
func waitHealthy(t *testing.T, podman, name, base string) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := c.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if state := strings.TrimSpace(podmanOut(t, podman, "inspect", "--format", "{{.State.Status}}", name)); state != "running" {
			t.Fatalf("container %s is %s:\n%s", name, state, podmanOut(t, podman, "logs", name))
		}
		time.Sleep(50 * time.Millisecond) // polling a process the test does not own, bounded by the deadline
	}
	t.Fatalf("container %s did not answer /healthz within 60s:\n%s", name, podmanOut(t, podman, "logs", name))
}

func podmanOut(t *testing.T, podman string, args ...string) string {
	t.Helper()
	out, err := exec.Command(podman, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// apiDo sends a REST request with the bearer token and decodes the JSON answer.
func apiDo(t *testing.T, method, url, token, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if resp.StatusCode >= 300 || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	return out
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
