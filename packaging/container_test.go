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
	suffix := randomHex(t)
	image := "localhost/acp-gateway-test:" + suffix
	cmd := exec.Command("../scripts/container.sh")
	cmd.Env = append(os.Environ(), "IMAGE="+image, "VERSION="+releaseVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("container.sh: %v\n%s", err, out)
	}
	t.Cleanup(func() { podmanOut(t, podman, "rmi", "-f", image) })

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
	podmanOut(t, podman, "volume", "create", volume)
	t.Cleanup(func() { podmanOut(t, podman, "volume", "rm", "-f", volume) })
	flags := podmanRunFlags
	if v, ok := os.LookupEnv("PODMAN_RUN_FLAGS"); ok {
		flags = strings.Fields(v)
	}
	// Host networking: the gateway gets a free loopback port of its own rather than the image's 0.0.0.0:8080.
	addr := "127.0.0.1:" + freePort(t)
	token := randomHex(t) + randomHex(t)
	run := func(name string) string {
		t.Helper()
		args := append([]string{"run", "-d", "--name", name}, flags...)
		args = append(args, "-v", volume+":/var/lib/acp-gateway", "-e", "GATEWAY_ADDR="+addr, "-e", "GATEWAY_TOKEN="+token, image)
		podmanOut(t, podman, args...)
		t.Cleanup(func() { podmanOut(t, podman, "rm", "-f", name) })
		waitHealthy(t, podman, name, "http://"+addr)
		return name
	}

	first := run("acp-gateway-test-" + suffix)
	var health map[string]string
	if err := json.Unmarshal(get(t, "http://"+addr+"/healthz"), &health); err != nil || health["version"] != releaseVersion {
		t.Fatalf("/healthz %v (%v), want version %s", health, err, releaseVersion)
	}
	// podman schedules the checks with systemd timers, which a machine without systemd lacks: run one.
	podmanOut(t, podman, "healthcheck", "run", first) // exits 1 when unhealthy
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
