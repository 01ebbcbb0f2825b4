package jsstore_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/blockcheck"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// A damaged --data-dir: bytes of the stored blocks flipped while the gateway was down. The
// start-up (testdata/opendamaged: the embedded server, Open, the directory's list, every log) runs in a child
// process under a heap limit, so an allocation without bound ends it instead of this test. The limit is
// RLIMIT_DATA, not RLIMIT_AS: the Go runtime reserves more than a gigabyte of address space it never uses.

// dataLimit bounds the child's heap (RLIMIT_DATA). A healthy start of the child stays below half of it.
const dataLimit = 256 << 20

// writeStore fills a store directory with n sessions (a directory entry and frames each), then stops its server
// and returns the directory.
func writeStore(t *testing.T, n int, frames uint64) string {
	t.Helper()
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{})
	for i := range n {
		sid := fmt.Sprintf("s%02d", i)
		live := eventlog.NewLog(eventlog.LogLimits{})
		p := st.Persist(sid, "e-"+sid, live, 0)
		appendFrames(t, live, 1, frames, never)
		flush(t, p)
		p.Stop()
		e := store.DirEntry{ID: sid, Agent: "ta", Cwd: "/", Status: store.StatusDetached, Clean: true, Epoch: "e-" + sid,
			CreatedAt: time.Unix(1, 0), LastSeq: frames}
		if _, err := st.Dir().Create(ctxT(t), e); err != nil {
			t.Fatal(err)
		}
	}
	srv.Stop()
	return srv.Dir()
}

// flipBits flips one random bit in frac of the bytes of every block file of the streams matching stream (a
// glob), drawing from a fixed seed.
func flipBits(t *testing.T, dir, stream string, frac float64, seed uint64) {
	t.Helper()
	blocks, err := filepath.Glob(filepath.Join(dir, "jetstream", "*", "streams", stream, "msgs", "*.blk"))
	if err != nil || len(blocks) == 0 {
		t.Fatalf("no blocks of %s in %s: %v", stream, dir, err)
	}
	r := rand.New(rand.NewPCG(seed, 25))
	for _, path := range blocks {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for range int(float64(len(b)) * frac) {
			b[r.IntN(len(b))] ^= 1 << r.IntN(8)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// buildOpenDamaged builds testdata/opendamaged (without -race: its shadow memory does not fit under the
// limit) into the test's temporary directory.
func buildOpenDamaged(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "opendamaged")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/opendamaged").CombinedOutput(); err != nil {
		t.Fatalf("build opendamaged: %v\n%s", err, out)
	}
	return bin
}

// openDamaged runs bin (buildOpenDamaged) on dir under dataLimit. It returns its exit code and output.
func openDamaged(t *testing.T, bin, dir string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, "-data-limit", fmt.Sprint(dataLimit), dir)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String()
}

var listedRE = regexp.MustCompile(`(?m)^sessions (\d+) frames (\d+)$`)

// TestDamagedStoreStartsBounded: with 2 % of the bytes of every block flipped, the start-up ends in bounded
// memory and says which blocks it cut and where their copies are. The same store undamaged starts under the
// same limit with everything listed.
func TestDamagedStoreStartsBounded(t *testing.T) {
	bin := buildOpenDamaged(t)
	dir := writeStore(t, 20, 300)
	if code, out := openDamaged(t, bin, dir); code != 0 || !strings.Contains(out, "sessions 20 frames 6000\n") {
		t.Fatalf("start on the undamaged store: exit %d\n%s", code, head(out, 600))
	}
	flipBits(t, dir, "*", 0.02, 1)
	code, out := openDamaged(t, bin, dir)
	if code != 0 || !listedRE.MatchString(out) {
		t.Fatalf("start on a damaged store: exit %d, want 0 and a listing\n%s", code, head(out, 600))
	}
	for _, stream := range []string{"acpgw-log", "KV_acpgw-sessions"} {
		if !strings.Contains(out, "damaged: stream "+stream+": block ") {
			t.Fatalf("the damage to %s is not reported:\n%s", stream, out)
		}
	}
	saved, _ := filepath.Glob(filepath.Join(dir, "damaged", "*", "jetstream", "*", "streams", "*", "msgs", "*.blk"))
	if len(saved) < 2 {
		t.Fatalf("copies of the damaged blocks: %v", saved)
	}
}

// TestDamagedDirectoryIsReported: damage to the session directory's blocks alone is reported, not a silent
// empty list.
func TestDamagedDirectoryIsReported(t *testing.T) {
	dir := writeStore(t, 20, 30)
	flipBits(t, dir, "KV_acpgw-sessions", 0.02, 3)
	code, out := openDamaged(t, buildOpenDamaged(t), dir)
	if code != 0 || !strings.Contains(out, "damaged: stream KV_acpgw-sessions: block ") {
		t.Fatalf("start on a store with a damaged directory: exit %d, want 0 and the damage reported\n%s", code, head(out, 600))
	}
}

// TestDamagedLogKeepsFramesBeforeTheCut: one flipped bit in the middle of the log's block costs the frames
// from that record on; the sessions are all listed, the frames before it served, and the cut reported.
func TestDamagedLogKeepsFramesBeforeTheCut(t *testing.T) {
	dir := writeStore(t, 4, 100)
	blocks, _ := filepath.Glob(filepath.Join(dir, "jetstream", "*", "streams", "acpgw-log", "msgs", "1.blk"))
	if len(blocks) != 1 {
		t.Fatalf("log blocks: %v", blocks)
	}
	b, err := os.ReadFile(blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(blocks[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := openDamaged(t, buildOpenDamaged(t), dir)
	m := listedRE.FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != "4" || m[2] == "0" || m[2] == "400" {
		t.Fatalf("start with one bad record: exit %d, want 4 sessions with some of their 400 frames\n%s", code, head(out, 1200))
	}
	if !strings.Contains(out, "damaged: stream acpgw-log: block 1.blk: a record's checksum does not match") {
		t.Fatalf("the cut is not reported:\n%s", head(out, 1200))
	}
}

// TestRepairLeavesAHealthyStore: a store nobody damaged is left as it is.
func TestRepairLeavesAHealthyStore(t *testing.T) {
	dir := writeStore(t, 3, 50)
	damage, err := blockcheck.Repair(dir)
	if err != nil || len(damage) != 0 {
		t.Fatalf("blockcheck.Repair on a healthy store: %v, %v", damage, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "damaged")); !os.IsNotExist(err) {
		t.Fatalf("a damaged directory was made: %v", err)
	}
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
