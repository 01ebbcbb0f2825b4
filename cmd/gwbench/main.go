// Command gwbench measures the gateway against the direct-stdio floor and a peer bridge, side by side in one
// run, and prints one table of medians over repeated runs (and writes it as JSON).
//
//	go run ./cmd/gwbench            # full: 5 runs, 10 000 × 256 B floods, 1 000 sessions × 10 clients
//	go run ./cmd/gwbench -short     # CI: 3 small runs, 50 sessions × 2 clients, well under a minute
//
// Rows: the flood agent (internal/bench/floodagent, run as `gwbench floodagent`) read directly over its stdio
// by an acp-go-sdk connection (the floor); the same agent through the gateway binary with 1 and 10 WebSocket
// clients on one session; the same through the other faces (raw ACP on /acp x1 and x10, SSE x1 and x10,
// long-poll pages x1), every face driven by one loop (measureFlood); through marimo's stdio-to-ws
// (bench/package.json) with one raw-ACP client; paced at 10 000 updates/s for the added latency, quiet and
// beside one CPU hog process per core (`gwbench hog`), with the gateway's GC cycles and pauses per row; with
// tool calls and permission requests mixed in. Then a scale run
// of idle sessions and sockets and one turn in every session at once, and the translate micro-benchmarks.
//
// The exit status is non-zero only when the benchmark cannot run (build, start, protocol failure). Missed
// targets and counted errors are reported, never fatal: the machine may be slow.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/acp-gateway/gateway/internal/bench/floodagent"
)

// self is this binary; the gateway and stdio-to-ws run it as the flood agent.
var self string

type options struct {
	short       bool
	runs        int
	n, size     int
	pacedN      int
	rate        float64
	scaleSess   int
	scaleCli    int
	idleFlood   int
	out         string
	gatewayBin  string
	benchDir    string
	peer        bool
	peer10      bool
	micro       bool
	scale       bool
	profile     string
	profileSec  int
	profileK    int
	profileRate float64
	profileHog  bool
	profileKind string
	profileFace string
	heapProfile string
	selfProfile string
	gwFlags     string
	cluster     bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hog" {
		spin()
	}
	if len(os.Args) > 1 && os.Args[1] == "floodagent" {
		fs := flag.NewFlagSet("floodagent", flag.ExitOnError)
		o := floodagent.OptionsFromEnv(os.Getenv)
		fs.IntVar(&o.N, "n", o.N, "chunks per prompt (default 10000)")
		fs.IntVar(&o.S, "s", o.S, "bytes per chunk (default 256)")
		fs.Float64Var(&o.Rate, "rate", o.Rate, "chunks per second (0 = as fast as possible)")
		fs.BoolVar(&o.Tools, "tools", o.Tools, "mix in tool calls and permission requests")
		_ = fs.Parse(os.Args[2:])
		if err := floodagent.Serve(context.Background(), o, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "floodagent:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.BoolVar(&o.short, "short", false, "CI mode: 3 small runs, 50 sessions × 2 clients (< 60 s)")
	flag.IntVar(&o.runs, "runs", 0, "repetitions (default 5, 3 with -short)")
	flag.IntVar(&o.n, "n", 0, "chunks per flood (default 10000, 2000 with -short)")
	flag.IntVar(&o.size, "s", 256, "payload bytes per chunk")
	flag.IntVar(&o.pacedN, "paced-n", 0, "chunks of the paced flood (default 20000, 3000 with -short)")
	flag.Float64Var(&o.rate, "rate", 10000, "updates/s of the paced flood")
	flag.IntVar(&o.scaleSess, "sessions", 0, "scale: demo sessions (default 1000, 50 with -short)")
	flag.IntVar(&o.scaleCli, "clients", 0, "scale: idle WebSocket clients per session (default 10, 2 with -short)")
	flag.IntVar(&o.idleFlood, "idle-flood", 0, "scale: idle flood-agent sessions for the per-session heap (default 100, 10 with -short)")
	flag.StringVar(&o.out, "out", "", "write the results as JSON to this file")
	flag.StringVar(&o.gatewayBin, "gateway", "", "gateway binary (default: go build ./cmd/gateway into a temp dir)")
	flag.StringVar(&o.benchDir, "bench-dir", "bench", "directory of the peer's node package (bench/package.json)")
	flag.BoolVar(&o.peer, "peer", true, "measure stdio-to-ws")
	flag.BoolVar(&o.peer10, "peer10", true, "also measure 10 stdio-to-ws connections (10 agents) at once")
	flag.BoolVar(&o.micro, "micro", true, "run the translate micro-benchmarks (go test)")
	flag.BoolVar(&o.scale, "scale", true, "run the scale measurement")
	flag.StringVar(&o.profile, "profile", "", "instead of the table: CPU-profile the gateway during floods and write the profile here")
	flag.IntVar(&o.profileSec, "profile-seconds", 10, "length of the CPU profile")
	flag.IntVar(&o.profileK, "profile-clients", 1, "clients during the profiled floods")
	flag.StringVar(&o.profileFace, "profile-face", "ws", "the face the profiled floods' clients use: ws, /acp, sse or pages")
	flag.Float64Var(&o.profileRate, "profile-rate", 0, "pace the profiled floods at this many updates/s (0 = as fast as possible)")
	flag.BoolVar(&o.profileHog, "profile-hog", false, "run one CPU hog process per core beside the profiled floods")
	flag.StringVar(&o.profileKind, "profile-kind", "profile", "with -profile: profile (CPU), allocs (allocations during the floods) or trace (execution trace)")
	flag.StringVar(&o.heapProfile, "heap-profile", "", "scale: write the gateway's heap profile with the demo sessions idle to this file")
	flag.StringVar(&o.gwFlags, "gateway-flags", "", "extra flags for the gateway under test (space-separated)")
	flag.StringVar(&wsClientKind, "ws-client", "lean", "the WebSocket clients of the ws and /acp rows: lean (a minimal RFC 6455 reader) or coder (coder/websocket)")
	flag.StringVar(&o.selfProfile, "self-profile", "", "CPU-profile gwbench itself (its clients) for the whole run and write the profile here")
	flag.BoolVar(&o.cluster, "cluster", true, "measure a session streamed through a non-owner node of a 3-node cluster (builds nats-server)")
	flag.Parse()
	def := func(v *int, full, short int) {
		if *v == 0 {
			*v = full
			if o.short {
				*v = short
			}
		}
	}
	def(&o.runs, 5, 3)
	def(&o.n, 10000, 2000)
	def(&o.pacedN, 20000, 3000)
	def(&o.scaleSess, 1000, 50)
	def(&o.scaleCli, 10, 2)
	def(&o.idleFlood, 100, 10)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "gwbench:", err)
		os.Exit(1)
	}
}

func warnf(format string, args ...any) { fmt.Fprintf(os.Stderr, "gwbench: "+format+"\n", args...) }

func raiseNoFile() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	rl.Cur = rl.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	return rl.Cur
}

// Results is what -out writes.
type Results struct {
	Commit  string             `json:"commit"`
	Machine map[string]string  `json:"machine"`
	Config  map[string]any     `json:"config"`
	Rows    []Row              `json:"rows"`
	Ratios  map[string]float64 `json:"ratios"`
	Scale   *scaleResult       `json:"scale,omitempty"`
	Micro   []microResult      `json:"micro,omitempty"`
	Targets []target           `json:"targets"`
	Notes   []string           `json:"notes,omitempty"`
	WallSec float64            `json:"wallSeconds"`
}

// Row is one measured path: the median of each figure over the runs, and every run.
type Row struct {
	Name   string  `json:"name"`
	Median flood   `json:"median"`
	Runs   []flood `json:"runs"`
	// Paired holds, for a row measured against direct stdio, the direct flood run just before each of its
	// runs: its ratio is taken against that one, so load that changes between rows does not enter it.
	Paired []flood `json:"pairedDirect,omitempty"`
	NA     string  `json:"na,omitempty"`
}

type target struct {
	Name  string  `json:"name"`
	Want  string  `json:"want"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	Met   bool    `json:"met"`
}

type rowSpec struct {
	name string
	fn   func(ctx context.Context) (flood, error)
	// paired: a direct flood runs just before each run of this row (Row.Paired).
	paired bool
}

func run(ctx context.Context, o options) error {
	began := time.Now()
	var err error
	if self, err = os.Executable(); err != nil {
		return err
	}
	nofile := raiseNoFile()
	if wsClientKind != "lean" && wsClientKind != "coder" {
		return fmt.Errorf("-ws-client %q: want lean or coder", wsClientKind)
	}
	if o.selfProfile != "" {
		f, err := os.Create(o.selfProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	tmp, err := os.MkdirTemp("", "gwbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if o.gatewayBin == "" {
		o.gatewayBin = filepath.Join(tmp, "gateway")
		fmt.Fprintln(os.Stderr, "gwbench: building ./cmd/gateway")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", o.gatewayBin, "./cmd/gateway")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/gateway: %w", err)
		}
	}
	var extra []string
	if o.gwFlags != "" {
		extra = strings.Fields(o.gwFlags)
	}
	if o.profile != "" {
		switch face(o.profileFace) {
		case faceWS, faceACP, faceSSE, facePages:
		default:
			return fmt.Errorf("-profile-face %q: want ws, /acp, sse or pages", o.profileFace)
		}
		return runProfile(ctx, o, tmp, extra)
	}

	res := &Results{Commit: gitCommit(), Machine: machine(), Ratios: map[string]float64{}}
	res.Machine["nofile"] = fmt.Sprint(nofile)
	res.Config = map[string]any{"short": o.short, "runs": o.runs, "n": o.n, "s": o.size, "pacedN": o.pacedN, "rate": o.rate,
		"gatewayFlags": extra, "wsClient": wsClientKind}

	g, err := startGateway(o.gatewayBin, tmp, "gateway-flood", false, extra...)
	if err != nil {
		return err
	}
	defer g.stop()
	res.Config["gatewayProcs"] = g.procs(ctx)
	// The same gateway keeping its sessions in an embedded JetStream store (docs/cluster.md §4): what the
	// write-behind costs the live path.
	durableFlags := append(append([]string(nil), extra...), "--data-dir", filepath.Join(tmp, "data"))
	gd, err := startGateway(o.gatewayBin, tmp, "gateway-datadir", false, durableFlags...)
	if err != nil {
		return err
	}
	defer gd.stop()
	var cb *clusterBench
	clusterNA := "n/a: disabled (-cluster=false)"
	if o.cluster {
		if cb, err = startClusterBench(ctx, o.gatewayBin, tmp, extra); err != nil {
			clusterNA = "n/a: " + err.Error()
			warnf("cluster row: %s", clusterNA)
		} else {
			defer cb.stop()
		}
	}
	var peer *peerProc
	peerNA := ""
	if o.peer {
		if peer, err = startPeer(o.benchDir); err != nil {
			peerNA = "n/a: " + err.Error()
			warnf("stdio-to-ws row: %s", peerNA)
		} else {
			defer peer.stop()
		}
	} else {
		peerNA = "n/a: disabled (-peer=false)"
	}

	floodP := fmt.Sprintf("flood %d %d", o.n, o.size)
	paced := fmt.Sprintf("flood %d %d rate=%g", o.pacedN, o.size, o.rate)
	tools := fmt.Sprintf("flood %d %d tools", o.n, o.size)
	specs := []rowSpec{
		{"direct (stdio, acp-go-sdk)", func(ctx context.Context) (flood, error) { return runDirect(ctx, floodP, o.n, o.size) }, false},
		{"gateway ws x1", func(ctx context.Context) (flood, error) { return runGateway(ctx, g, 1, floodP, o.n, o.size) }, true},
		{"gateway ws x1 --data-dir", func(ctx context.Context) (flood, error) { return runGateway(ctx, gd, 1, floodP, o.n, o.size) }, false},
		{"gateway ws x10 (per client)", func(ctx context.Context) (flood, error) { return runGateway(ctx, g, 10, floodP, o.n, o.size) }, true},
	}
	// The other faces, same session and flood: what each adds over the session WebSocket.
	for _, f := range otherFaces {
		for _, k := range f.clients {
			specs = append(specs, rowSpec{faceRow(f.face, k), func(ctx context.Context) (flood, error) { return runFace(ctx, g, f.face, k, floodP, o.n, o.size) }, true})
		}
	}
	if cb != nil {
		specs = append(specs, rowSpec{clusterRow, func(ctx context.Context) (flood, error) { return runNonOwner(ctx, cb, 1, floodP, o.n, o.size) }, false})
	}
	if peer != nil {
		specs = append(specs, rowSpec{"stdio-to-ws " + peer.version + " x1", func(ctx context.Context) (flood, error) { return runPeer(ctx, peer, 1, floodP, o.n, o.size) }, true})
		if o.peer10 {
			specs = append(specs, rowSpec{"stdio-to-ws x10 agents (per client)", func(ctx context.Context) (flood, error) { return runPeer(ctx, peer, 10, floodP, o.n, o.size) }, true})
		}
	}
	specs = append(specs,
		rowSpec{fmt.Sprintf("direct paced %g/s", o.rate), func(ctx context.Context) (flood, error) { return runDirect(ctx, paced, o.pacedN, o.size) }, false},
		rowSpec{fmt.Sprintf("gateway ws x1 paced %g/s", o.rate), func(ctx context.Context) (flood, error) { return runGateway(ctx, g, 1, paced, o.pacedN, o.size) }, false},
		rowSpec{fmt.Sprintf("direct paced %g/s + hog", o.rate), func(ctx context.Context) (flood, error) {
			return withHogs(func() (flood, error) { return runDirect(ctx, paced, o.pacedN, o.size) })
		}, false},
		rowSpec{fmt.Sprintf("gateway ws x1 paced %g/s + hog", o.rate), func(ctx context.Context) (flood, error) {
			return withHogs(func() (flood, error) { return runGateway(ctx, g, 1, paced, o.pacedN, o.size) })
		}, false},
		rowSpec{"direct tools+permissions", func(ctx context.Context) (flood, error) { return runDirect(ctx, tools, o.n, o.size) }, false},
		rowSpec{"gateway ws x1 tools+permissions", func(ctx context.Context) (flood, error) { return runGateway(ctx, g, 1, tools, o.n, o.size) }, false},
	)
	rows := make([]Row, len(specs))
	for i := range specs {
		rows[i].Name = specs[i].name
	}
	// Runs interleave the rows, so a noisy moment hits every row rather than one; a row measured against
	// direct stdio has a direct flood of its own just before it (its pair, also counted in the direct row).
	for r := 0; r < o.runs; r++ {
		fmt.Fprintf(os.Stderr, "gwbench: run %d/%d\n", r+1, o.runs)
		for i, s := range specs {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s.paired {
				d, err := specs[0].fn(ctx)
				if err != nil {
					return fmt.Errorf("%s (paired with %s): %w", specs[0].name, s.name, err)
				}
				rows[i].Paired = append(rows[i].Paired, d)
				rows[0].Runs = append(rows[0].Runs, d)
			}
			f, err := s.fn(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			rows[i].Runs = append(rows[i].Runs, f)
		}
	}
	for i := range rows {
		rows[i].Median = medianFlood(rows[i].Runs)
	}
	if peer == nil {
		rows = append(rows, Row{Name: "stdio-to-ws x1", NA: peerNA})
	}
	if cb == nil {
		rows = append(rows, Row{Name: clusterRow, NA: clusterNA})
	}
	res.Rows = rows
	byName := map[string]*Row{}
	for i := range rows {
		byName[rows[i].Name] = &rows[i]
	}
	direct := specs[0].name
	ratio := func(a, b string, pick func(flood) float64, op func(x, y float64) float64) float64 {
		ra, rb := byName[a], byName[b]
		if ra == nil || rb == nil || len(ra.Runs) == 0 {
			return math.NaN()
		}
		var v []float64
		for i := range ra.Runs {
			against := rb.Runs[i]
			if b == direct {
				// The direct row holds every paired flood: only a row's own pairs line up with its runs.
				if len(ra.Paired) != len(ra.Runs) {
					return math.NaN()
				}
				against = ra.Paired[i]
			}
			v = append(v, op(pick(ra.Runs[i]), pick(against)))
		}
		return median(v)
	}
	div := func(x, y float64) float64 { return x / y }
	sub := func(x, y float64) float64 { return x - y }
	thr := func(f flood) float64 { return f.UpdPerSec }
	p99 := func(f flood) float64 { return f.P99ms }
	res.Ratios["gateway_x1_vs_direct"] = ratio("gateway ws x1", direct, thr, div)
	res.Ratios["gateway_datadir_x1_vs_memory_x1"] = ratio("gateway ws x1 --data-dir", "gateway ws x1", thr, div)
	if cb != nil {
		res.Ratios["gateway_cluster_nonowner_x1_vs_memory_x1"] = ratio(clusterRow, "gateway ws x1", thr, div)
	}
	res.Ratios["gateway_x10_per_client_vs_direct"] = ratio("gateway ws x10 (per client)", direct, thr, div)
	res.Ratios["gateway_tools_vs_direct_tools"] = ratio("gateway ws x1 tools+permissions", "direct tools+permissions", thr, div)
	res.Ratios["gateway_paced_added_p99_ms"] = ratio(fmt.Sprintf("gateway ws x1 paced %g/s", o.rate), fmt.Sprintf("direct paced %g/s", o.rate), p99, sub)
	res.Ratios["gateway_paced_hog_added_p99_ms"] = ratio(fmt.Sprintf("gateway ws x1 paced %g/s + hog", o.rate), fmt.Sprintf("direct paced %g/s + hog", o.rate), p99, sub)
	for _, f := range otherFaces {
		for _, k := range f.clients {
			res.Ratios[faceRatio(f.face, k)] = ratio(faceRow(f.face, k), direct, thr, div)
		}
	}
	if peer != nil {
		pn := "stdio-to-ws " + peer.version + " x1"
		res.Ratios["stdio_to_ws_x1_vs_direct"] = ratio(pn, direct, thr, div)
		res.Ratios["gateway_x1_vs_stdio_to_ws_x1"] = ratio("gateway ws x1", pn, thr, div)
		if o.peer10 {
			res.Ratios["stdio_to_ws_x10_agents_per_client_vs_direct"] = ratio("stdio-to-ws x10 agents (per client)", direct, thr, div)
		}
	}
	g.stop()
	gd.stop()
	fmt.Fprintf(os.Stderr, "gwbench: restart hydrate %d frames\n", o.n)
	hydrateMs, err := runRestartHydrate(ctx, o, tmp, extra)
	if err != nil {
		return fmt.Errorf("restart hydrate: %w", err)
	}
	res.Ratios[fmt.Sprintf("restart_hydrate_%d_frames_ms", o.n)] = hydrateMs

	if o.scale {
		fmt.Fprintf(os.Stderr, "gwbench: scale: %d flood sessions idle, %d demo sessions × %d clients\n", o.idleFlood, o.scaleSess, o.scaleCli)
		sr, err := runScale(ctx, o, tmp, extra)
		if err != nil {
			return fmt.Errorf("scale: %w", err)
		}
		res.Scale = sr
	}
	if o.micro {
		fmt.Fprintln(os.Stderr, "gwbench: translate micro-benchmarks")
		m, err := runMicro(ctx, o.short)
		if err != nil {
			res.Notes = append(res.Notes, "micro-benchmarks failed: "+err.Error())
			warnf("micro-benchmarks: %v", err)
		}
		res.Micro = m
	}
	res.Targets = targets(res, o)
	res.WallSec = time.Since(began).Seconds()
	res.Machine["loadavgAtEnd"] = loadavg()
	printTable(os.Stdout, res)
	if o.out != "" {
		b, err := json.MarshalIndent(sanitize(res), "", "  ")
		if err != nil {
			return fmt.Errorf("-out: %w", err)
		}
		if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func medianFlood(runs []flood) flood {
	pick := func(f func(flood) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return median(v)
	}
	m := flood{
		UpdPerSec:      pick(func(f flood) float64 { return f.UpdPerSec }),
		MBPerSec:       pick(func(f flood) float64 { return f.MBPerSec }),
		P50ms:          pick(func(f flood) float64 { return f.P50ms }),
		P99ms:          pick(func(f flood) float64 { return f.P99ms }),
		EndTurnMs:      pick(func(f flood) float64 { return f.EndTurnMs }),
		CPUus:          pick(func(f flood) float64 { return f.CPUus }),
		GCs:            pick(func(f flood) float64 { return f.GCs }),
		GCPauseMs:      pick(func(f flood) float64 { return f.GCPauseMs }),
		ClientCPUus:    pick(func(f flood) float64 { return f.ClientCPUus }),
		WritesPerFrame: pick(func(f flood) float64 { return f.WritesPerFrame }),
		AgentCPUus:     pick(func(f flood) float64 { return f.AgentCPUus }),
	}
	for _, r := range runs {
		m.Errors += r.Errors
		m.Updates = max(m.Updates, r.Updates)
		m.Chunks = max(m.Chunks, r.Chunks)
	}
	return m
}

func targets(res *Results, o options) []target {
	var t []target
	add := func(name, want string, v float64, unit string, met bool) {
		if math.IsNaN(v) {
			return
		}
		t = append(t, target{name, want, v, unit, met})
	}
	r := res.Ratios
	add("throughput gateway x1 / direct", ">= 0.9", r["gateway_x1_vs_direct"], "x", r["gateway_x1_vs_direct"] >= 0.9)
	add("throughput per client gateway x10 / direct", ">= 0.8", r["gateway_x10_per_client_vs_direct"], "x", r["gateway_x10_per_client_vs_direct"] >= 0.8)
	add(fmt.Sprintf("added p99 at %g/s", o.rate), "<= 1 ms", r["gateway_paced_added_p99_ms"], "ms", r["gateway_paced_added_p99_ms"] <= 1)
	for _, f := range otherFaces {
		for _, k := range f.clients {
			want, min := ">= 0.9", 0.9
			name := fmt.Sprintf("throughput gateway %s x1 / direct", f.face)
			if k > 1 {
				want, min = ">= 0.8", 0.8
				name = fmt.Sprintf("throughput per client gateway %s x%d / direct", f.face, k)
			}
			v := r[faceRatio(f.face, k)]
			add(name, want, v, "x", v >= min)
		}
	}
	if v, ok := r["gateway_datadir_x1_vs_memory_x1"]; ok {
		add("throughput gateway x1 --data-dir / memory x1", ">= 0.8", v, "x", v >= 0.8)
	}
	if v, ok := r["gateway_cluster_nonowner_x1_vs_memory_x1"]; ok {
		add("throughput via a non-owner node (3-node cluster) / memory x1", ">= 0.5", v, "x", v >= 0.5)
	}
	if v, ok := r["gateway_x1_vs_stdio_to_ws_x1"]; ok {
		add("throughput gateway x1 / stdio-to-ws x1", ">= 1", v, "x", v >= 1)
	}
	if s := res.Scale; s != nil {
		add("heap per idle session (flood agent, gateway only)", "<= 64 KiB", s.HeapPerIdleSessionKiB, "KiB", s.HeapPerIdleSessionKiB <= 64)
		add("heap per idle demo session (both ends in process)", "<= 64 KiB", s.HeapPerDemoSessionKiB, "KiB", s.HeapPerDemoSessionKiB <= 64)
		add("heap per idle WebSocket", "<= 32 KiB", s.HeapPerWSKiB, "KiB", s.HeapPerWSKiB <= 32)
		e := float64(s.Errors())
		add(fmt.Sprintf("%d × %d turn errors", s.Sessions, s.ClientsPerSession), "0", e, "", e == 0)
	}
	for _, m := range res.Micro {
		if strings.HasPrefix(m.Name, "BenchmarkTranslateChunk/") {
			add(m.Name+" time", "<= 2 µs", m.NsPerOp/1000, "µs", m.NsPerOp <= 2000)
			add(m.Name+" allocs", "<= 4", m.AllocsPerOp, "allocs", m.AllocsPerOp <= 4)
		}
	}
	return t
}

func fmtF(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func printTable(w io.Writer, res *Results) {
	fmt.Fprintf(w, "\ngwbench @ %s on %s (%s cores), %v runs, flood %v × %v B, %v WebSocket clients, gateway GOMAXPROCS %v; medians\n\n", res.Commit, res.Machine["cpu"], res.Machine["nproc"], res.Config["runs"], res.Config["n"], res.Config["s"], res.Config["wsClient"], res.Config["gatewayProcs"])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\tupdates/s\tpayload MB/s\tp50 ms\tp99 ms\tend_turn ms\tCPU µs/update\tclient CPU µs\tagent CPU µs\twrites/frame\terrors\t")
	for _, r := range res.Rows {
		if r.NA != "" {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t\t\n", r.Name, r.NA)
			continue
		}
		m := r.Median
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", r.Name, fmtF(m.UpdPerSec, 0), fmtF(m.MBPerSec, 1), fmtF(m.P50ms, 3), fmtF(m.P99ms, 3), fmtF(m.EndTurnMs, 1), fmtF(m.CPUus, 1), fmtF(m.ClientCPUus, 1), fmtF(m.AgentCPUus, 1), fmtF(m.WritesPerFrame, 2), m.Errors)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nratios (median of per-run ratios)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range sortedKeys(res.Ratios) {
		fmt.Fprintf(tw, "  %s\t%s\n", k, fmtF(res.Ratios[k], 3))
	}
	tw.Flush()
	printLatency(w, res)
	if s := res.Scale; s != nil {
		fmt.Fprintf(w, "\nscale: %d idle flood sessions; %d demo sessions × %d idle WebSockets\n", s.IdleFloodSessions, s.Sessions, s.ClientsPerSession)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  heap / idle session (flood agent out of process)\t%s KiB\tRSS %s KiB\tgoroutines %s\n", fmtF(s.HeapPerIdleSessionKiB, 1), fmtF(s.RSSPerIdleSessionKiB, 1), fmtF(s.GoroutinesPerIdleSession, 1))
		fmt.Fprintf(tw, "  heap / demo session (demo agent in process)\t%s KiB\tRSS %s KiB\tgoroutines %s\n", fmtF(s.HeapPerDemoSessionKiB, 1), fmtF(s.RSSPerDemoSessionKiB, 1), fmtF(s.GoroutinesPerDemoSession, 1))
		fmt.Fprintf(tw, "  heap / idle WebSocket\t%s KiB\tRSS %s KiB\tgoroutines %s\n", fmtF(s.HeapPerWSKiB, 1), fmtF(s.RSSPerWSKiB, 1), fmtF(s.GoroutinesPerWS, 2))
		fmt.Fprintf(tw, "  one turn in every session at once\t%s turns/s\tp50 %s ms\tp99 %s ms\terrors %d (turns %d, sockets %d, missed turn_ended %d)\n", fmtF(s.TurnsPerSec, 0), fmtF(s.TurnP50ms, 1), fmtF(s.TurnP99ms, 1), s.Errors(), s.TurnErrors, s.ClientErrors, s.MissedTurnEnded)
		tw.Flush()
	}
	if len(res.Micro) > 0 {
		fmt.Fprintln(w, "\ntranslate micro-benchmarks")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, m := range res.Micro {
			fmt.Fprintf(tw, "  %s\t%s ns/op\t%s B/op\t%s allocs/op\n", m.Name, fmtF(m.NsPerOp, 0), fmtF(m.BytesPerOp, 0), fmtF(m.AllocsPerOp, 0))
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "\ntargets")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range res.Targets {
		mark := "met"
		if !t.Met {
			mark = "MISSED"
		}
		fmt.Fprintf(tw, "  %s\t%s %s\t(want %s)\t%s\n", t.Name, fmtF(t.Value, 3), t.Unit, t.Want, mark)
	}
	tw.Flush()
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	fmt.Fprintf(w, "\nwall time %.1f s; load average at start %s, at end %s (other work on the machine skews absolute figures; compare ratios)\n", res.WallSec, res.Machine["loadavgAtStart"], res.Machine["loadavgAtEnd"])
}

func sortedKeys(m map[string]float64) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	for i := range k {
		for j := i + 1; j < len(k); j++ {
			if k[j] < k[i] {
				k[i], k[j] = k[j], k[i]
			}
		}
	}
	return k
}

// sanitize replaces NaN (not JSON) by -1 in the figures that may lack data.
func sanitize(res *Results) *Results {
	fix := func(v *float64) {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			*v = -1
		}
	}
	fixF := func(f *flood) {
		fix(&f.UpdPerSec)
		fix(&f.MBPerSec)
		fix(&f.P50ms)
		fix(&f.P99ms)
		fix(&f.EndTurnMs)
		fix(&f.CPUus)
		fix(&f.GCs)
		fix(&f.GCPauseMs)
		fix(&f.ClientCPUus)
		fix(&f.WritesPerFrame)
		fix(&f.AgentCPUus)
	}
	for i := range res.Rows {
		fixF(&res.Rows[i].Median)
		for j := range res.Rows[i].Runs {
			fixF(&res.Rows[i].Runs[j])
		}
		for j := range res.Rows[i].Paired {
			fixF(&res.Rows[i].Paired[j])
		}
	}
	for k, v := range res.Ratios {
		fix(&v)
		res.Ratios[k] = v
	}
	return res
}

func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "+dirty"
	}
	return c
}

func machine() map[string]string {
	m := map[string]string{"nproc": fmt.Sprint(runtime.NumCPU()), "go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH, "cpu": "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m["cpu"] = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if l, _, ok := strings.Cut(string(b), "\n"); ok {
			m["mem"] = strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m["loadavgAtStart"] = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
