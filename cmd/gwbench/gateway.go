package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// gatewayProc is the gateway binary, exec'd the way an operator runs it.
type gatewayProc struct {
	base      string // http://127.0.0.1:port
	debugAddr string
	cmd       *exec.Cmd
	logPath   string
	workdir   string // --workdir: the cwd of sessions made over /acp
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startGateway execs the gateway with the flood agent configured and extra flags, and waits for /healthz.
func startGateway(bin, dir, name string, debug bool, extra ...string) (*gatewayProc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	g := &gatewayProc{base: "http://" + addr, logPath: filepath.Join(dir, name+".log"), workdir: dir}
	args := []string{"--addr", addr, "--log-level", "warn", "--workdir", dir, "--max-sessions", "0",
		"--agent", "flood=" + strings.Join(floodCmd(), " ")}
	if debug {
		if g.debugAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		args = append(args, "--debug-addr", g.debugAddr)
	}
	args = append(args, extra...)
	logf, err := os.Create(g.logPath)
	if err != nil {
		return nil, err
	}
	g.cmd = exec.Command(bin, args...)
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	logf.Close()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(g.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return g, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.stop()
	return nil, fmt.Errorf("gateway did not become ready; log: %s", g.logPath)
}

// stop interrupts the gateway (graceful shutdown) and kills its group after a grace.
func (g *gatewayProc) stop() {
	_ = g.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL) // agents left in the group
}

var httpc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}, Timeout: 5 * time.Minute}

func (g *gatewayProc) do(ctx context.Context, method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %v: %q", method, path, err, data)
		}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	return resp.StatusCode, nil
}

func (g *gatewayProc) createSession(ctx context.Context, agent string) (string, error) {
	var s struct {
		ID string `json:"id"`
	}
	_, err := g.do(ctx, "POST", "/v1/sessions", map[string]string{"agent": agent, "permissionPolicy": "approve-all"}, &s)
	return s.ID, err
}

func (g *gatewayProc) wsURL(id string) string {
	return "ws" + strings.TrimPrefix(g.base, "http") + "/v1/sessions/" + id + "/ws"
}

var (
	tokReplayDone = []byte(`"_gateway/replay_complete"`)
	tokTurnEnded  = []byte(`"_gateway/turn_ended"`)
	tokSlow       = []byte(`"_gateway/slow_client"`)
	tokEndTurn    = []byte(`"stopReason":"end_turn"`)
)

// runGateway floods one session through the gateway with k session-WebSocket clients attached.
func runGateway(ctx context.Context, g *gatewayProc, k int, prompt string, n, size int) (flood, error) {
	return runFace(ctx, g, faceWS, k, prompt, n, size)
}

// gatewaySample is what a flood reads from the gateway's /metrics before and after: CPU and GC.
type gatewaySample struct {
	cpu      float64 // process_cpu_seconds_total
	gcs      float64 // go_gc_duration_seconds_count: GC cycles
	gcPauses float64 // go_gc_duration_seconds_sum: their stop-the-world pauses, seconds
	writes   float64 // syscw of /proc/<pid>/io: write(2)-family calls; NaN where unreadable
	agentCPU float64 // CPU seconds of the gateway's child processes (the agents); NaN where unreadable
	ok       bool
}

// sample reads the gateway's CPU and GC counters; ok is false when /metrics is unreadable.
func (g *gatewayProc) sample(ctx context.Context) gatewaySample {
	req, _ := http.NewRequestWithContext(ctx, "GET", g.base+"/metrics", nil)
	resp, err := httpc.Do(req)
	if err != nil {
		return gatewaySample{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	s := gatewaySample{ok: true}
	for _, m := range []struct {
		key string
		v   *float64
	}{{"\nprocess_cpu_seconds_total ", &s.cpu}, {"\ngo_gc_duration_seconds_count ", &s.gcs}, {"\ngo_gc_duration_seconds_sum ", &s.gcPauses}} {
		v, found := metricValue(b, m.key)
		if !found {
			return gatewaySample{}
		}
		*m.v = v
	}
	s.writes = g.syscw()
	s.agentCPU = g.childrenCPU()
	return s
}

// procs is the gateway's GOMAXPROCS (cmd/gateway picks 1 on two CPUs; GOMAXPROCS in gwbench's environment,
// which the gateway inherits, overrides it), or 0 when /metrics does not say.
func (g *gatewayProc) procs(ctx context.Context) int {
	req, _ := http.NewRequestWithContext(ctx, "GET", g.base+"/metrics", nil)
	resp, err := httpc.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	v, _ := metricValue(b, "\ngo_sched_gomaxprocs_threads ")
	return int(v)
}

// childrenCPU is the CPU time (utime + stime) of the gateway's child processes, the agents it runs: the live
// ones (/proc/<child>/stat) and those it has reaped (cutime + cstime of its own stat), so an agent that exits
// between two samples keeps its share. 10 ms resolution (USER_HZ 100); NaN where /proc is not readable or the
// gateway has never had a child.
func (g *gatewayProc) childrenCPU() float64 {
	if g.cmd == nil || g.cmd.Process == nil {
		return math.NaN()
	}
	pid := g.cmd.Process.Pid
	own, ok := statTicks(fmt.Sprintf("/proc/%d/stat", pid), 13, 14) // cutime, cstime
	if !ok {
		return math.NaN()
	}
	ticks, found := own, own > 0
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return math.NaN()
	}
	for _, t := range tasks {
		kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, kid := range strings.Fields(string(kids)) {
			if v, ok := statTicks("/proc/"+kid+"/stat", 11, 12); ok { // utime, stime
				ticks += v
				found = true
			}
		}
	}
	if !found {
		return math.NaN() // no agent here (a node that serves another node's session)
	}
	return ticks / 100
}

// statTicks sums two fields of a /proc stat file, counted from the first field after the command (which may
// hold spaces; it ends at the last ')'): 11 and 12 are utime and stime, 13 and 14 cutime and cstime.
func statTicks(path string, i, j int) (float64, bool) {
	st, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
	if len(f) <= j {
		return 0, false
	}
	a, err1 := strconv.ParseFloat(f[i], 64)
	b, err2 := strconv.ParseFloat(f[j], 64)
	return a + b, err1 == nil && err2 == nil
}

// syscw reads how many write-family syscalls the gateway process has made (Linux /proc/<pid>/io), so a flood
// can say how many writes each frame cost; NaN where that is not readable.
func (g *gatewayProc) syscw() float64 {
	if g.cmd == nil || g.cmd.Process == nil {
		return math.NaN()
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", g.cmd.Process.Pid))
	if err != nil {
		return math.NaN()
	}
	v, ok := metricValue(append([]byte("\n"), b...), "\nsyscw: ")
	if !ok {
		return math.NaN()
	}
	return v
}

// metricValue finds "\nname value" in a Prometheus text exposition.
func metricValue(b []byte, key string) (float64, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0, false
	}
	line := b[i+len(key):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	v, err := strconv.ParseFloat(string(bytes.TrimSpace(line)), 64)
	return v, err == nil
}
