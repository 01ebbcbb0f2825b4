package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestDeliverySlowClientEvicted: a client that stops reading is closed with 4001 once it lags too far behind,
// while a normal client on the same session gets every frame; the evicted client then resumes from its last seq
// and ends up with the whole log.
//
// How it is made deterministic: the slow client's receive buffer is pinned small (SO_RCVBUF), and the test
// writes more than the server's largest possible send buffer (tcp_wmem max) plus the queue bound, so the
// slow client's writer must block on a full TCP buffer while the log keeps growing. Each turn is a burst of
// at most 205 frames and the test waits for the normal client to see the end of each turn before the next,
// so the normal client never lags more than one turn (< --ws-queue-frames 300). The write timeout and the ping
// interval are set far beyond the test's length: a write blocked on the full socket must end because the
// client reads again, not because the watchdog dropped the socket, nor because the slow client (which reads
// nothing during the flood, so answers no ping) missed a pong; either closes it without a code. Under load
// the flood takes minutes (more than the default 25 s ping interval), which is how this test once failed with
// "connection reset by peer" instead of 4001. No deadline spans the flood either: each phase has its own.
func TestDeliverySlowClientEvicted(t *testing.T) {
	const (
		chunks    = 200
		chunkSize = 2000
		queue     = 300
	)
	wmemMax := readSysctlMax(t, "/proc/sys/net/ipv4/tcp_wmem")
	turnBytes := chunks * chunkSize
	// Enough to fill the server's send buffer (at most tcp_wmem max) and the pinned receive buffer, then at
	// least 4 turns (800 frames) more than --ws-queue-frames: few turns, so the window during which the slow
	// writer is blocked stays short.
	turns := (wmemMax+1<<20)/turnBytes + 4
	g, _ := testAgentGateway(t, "flood", "--ws-queue-frames", strconv.Itoa(queue), "--log-max-frames", "1000000", "--log-max-bytes", "4294967296", "--write-timeout", "10m", "--ws-ping-interval", "10m")
	s := g.createSession(nil)

	// The slow client: a small receive buffer; reads up to replay_complete, then stops reading.
	dialer := smallReceiveDialer()
	dialCtx, cancelDial := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancelDial()
	slow, _, err := websocket.Dial(dialCtx, g.wsURL("/v1/sessions/"+s.ID+"/ws"), &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: contractTransport{next: &http.Transport{DialContext: dialer.DialContext}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	slow.SetReadLimit(64 << 20)
	var slowFrames []logEntry
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	// readSlow reads up to replay_complete (the replay holds session_ready) until replayed, then to the close.
	readSlow := func(replayed bool) error {
		for {
			_, data, err := slow.Read(ctx)
			if err != nil {
				return err
			}
			f, _ := parseWire(data)
			if f.Method == "_gateway/replay_complete" && !replayed {
				return nil
			}
			if seq := f.Params.Meta.Gateway.Seq; seq > 0 {
				if want := uint64(len(slowFrames)) + 1; seq != want {
					return fmt.Errorf("slow client: seq %d, want %d", seq, want)
				}
				slowFrames = append(slowFrames, logEntry{seq, data})
			}
		}
	}
	if err := readSlow(false); err != nil {
		t.Fatal(err)
	}
	cancel()

	normal := g.dial("/v1/sessions/" + s.ID + "/ws")
	start := time.Now()
	for i := range turns {
		var res struct{ TurnID, StopReason string }
		if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", fmt.Sprintf(`{"text":"%d %d"}`, chunks, chunkSize), &res); code != http.StatusOK || res.StopReason != "end_turn" {
			t.Fatalf("turn %d: %d %+v", i, code, res)
		}
		normal.waitFor("turn "+strconv.Itoa(i), turnEnded(res.TurnID))
	}
	t.Logf("%d turns of %d x %d bytes (%d MiB; tcp_wmem max %d KiB) in %s", turns, chunks, chunkSize, turns*turnBytes>>20, wmemMax>>10, time.Since(start).Round(time.Millisecond))

	// Now read the slow client: everything it was sent, then the close.
	ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = readSlow(true)
	if st := websocket.CloseStatus(err); st != 4001 {
		t.Fatalf("slow client ended with %v (status %d) after %d frames, want close 4001", err, st, len(slowFrames))
	}
	normal.mu.Lock()
	nst := normal.status
	normal.mu.Unlock()
	if nst != -1 {
		t.Fatalf("the normal client was closed too (%d)", nst)
	}
	var v sessionJSON
	g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
	t.Logf("slow client evicted at seq %d of %d", len(slowFrames), v.LastSeq)
	if uint64(len(slowFrames)) >= v.LastSeq {
		t.Fatalf("slow client had everything (%d frames) and was still evicted", len(slowFrames))
	}
	nf := normal.snapshot()
	if got := checkContiguous(t, nf, 1); got != v.LastSeq {
		t.Fatalf("normal client got up to %d, head %d", got, v.LastSeq)
	}

	// The evicted client resumes where it was cut and gets exactly the rest (logWS checks the seqs run on
	// from last+1). It is read without the schema check, which costs seconds for thousands of frames: the
	// normal client checked every frame of the log, and every resumed frame is compared with the log below.
	last := uint64(len(slowFrames))
	rest := g.logWS(t, s.ID, s.Epoch, last)
	if got := last + uint64(len(rest)); got != v.LastSeq {
		t.Fatalf("resume replayed up to %d, want %d", got, v.LastSeq)
	}
	full := g.fullLogWS(t, s.ID, s.Epoch)
	for _, f := range nf {
		if seq := f.Params.Meta.Gateway.Seq; seq > 0 && !bytes.Equal(f.Raw, full[seq-1].Raw) {
			t.Fatalf("normal client frame %d differs from the log", seq)
		}
	}
	for i, e := range slowFrames {
		if !bytes.Equal(e.Raw, full[i].Raw) {
			t.Fatalf("slow client frame %d differs from the log", e.Seq)
		}
	}
	for _, e := range rest {
		if !bytes.Equal(e.Raw, full[e.Seq-1].Raw) {
			t.Fatalf("resumed frame %d differs from the log", e.Seq)
		}
	}
}

// readSysctlValue returns the number a one-value sysctl file holds.
func readSysctlValue(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("cannot size the socket buffers: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Skipf("%s: %q", path, b)
	}
	return n
}

// readSysctlMax returns the third (max) value of a tcp_rmem/tcp_wmem style file.
func readSysctlMax(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("cannot size the socket buffers: %v", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 3 {
		t.Skipf("%s: %q", path, b)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		t.Skipf("%s: %q", path, b)
	}
	return n
}

// smallReceiveDialer dials with the receive buffer pinned small (SO_RCVBUF 8 KiB), so a client that stops
// reading makes the gateway's writes block after little data.
func smallReceiveDialer() *net.Dialer { return receiveBufferDialer(8 << 10) }

// receiveBufferDialer dials with the receive buffer pinned to size bytes (no autotuning; the kernel caps it
// at net.core.rmem_max).
func receiveBufferDialer(size int) *net.Dialer {
	return &net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size) })
		if err != nil {
			return err
		}
		return serr
	}}
}
