package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseReader reads a session's event stream to the end, keeping the logged frames (those with an id).
type sseReader struct {
	mu     sync.Mutex
	frames []logEntry // Guarded by mu.
	err    error      // Guarded by mu; why the stream ended, once it has.
	done   chan struct{}
}

func readSSE(ctx context.Context, g *gateway, id string, client *http.Client) *sseReader {
	r := &sseReader{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		err := r.read(ctx, client, g.base+"/v1/sessions/"+id+"/events")
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
	}()
	return r
}

func (r *sseReader) read(ctx context.Context, client *http.Client, url string) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var evID string
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		switch {
		case bytes.HasPrefix(line, []byte("id: ")):
			evID = string(line[4:])
		case bytes.HasPrefix(line, []byte("data: ")) && evID != "":
			seq, _ := strconv.ParseUint(evID, 10, 64)
			r.mu.Lock()
			if want := uint64(len(r.frames)) + 1; seq != want {
				r.mu.Unlock()
				return fmt.Errorf("id %d, want %d", seq, want)
			}
			r.frames = append(r.frames, logEntry{seq, append([]byte(nil), line[6:]...)})
			r.mu.Unlock()
		case len(line) == 0:
			evID = ""
		}
	}
}

// last is the seq of the last frame read, and the error the stream ended with (nil while it runs).
func (r *sseReader) last() (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return uint64(len(r.frames)), r.err
}

// TestDeliverySlowSSEClientEvicted: an event-stream client that stops reading during a flood is dropped by
// the write watchdog (its slot freed) within bounded time, while a reading client gets every frame.
//
// The stalled client's receive buffer is pinned small and the flood is larger than the server's largest send
// buffer (tcp_wmem max), so its writer must block on a full socket; nothing else would ever end that write.
//
// The watchdog bounds every write of the stream, the reading client's too, so the reading client must never
// make a write wait: its receive buffer is pinned large enough for a whole turn (autotuning starts it at
// 128 KiB, and a reader starved of CPU for half the write timeout on a loaded machine was dropped), and the
// test waits for it to read each turn before the next. Then only a write stalled by scheduling alone for half
// the write timeout could drop it, hence a timeout of seconds: the stalled client's write still blocks during
// the flood, so a longer timeout barely lengthens the test (10 s, the default: a write must have been stuck
// for 5 s). No deadline spans the flood, which takes minutes under load (a 120 s one once ended the reading
// client): each wait has its own.
func TestDeliverySlowSSEClientEvicted(t *testing.T) {
	const chunkSize = 2000
	wmemMax := readSysctlMax(t, "/proc/sys/net/ipv4/tcp_wmem")
	rcvbuf := min(readSysctlValue(t, "/proc/sys/net/core/rmem_max"), 4<<20)
	// A turn's event stream (about 2.3 KB a chunk) fits in a quarter of the reading client's receive buffer.
	chunks := min(200, rcvbuf/4/(chunkSize+300))
	if chunks < 10 {
		t.Skipf("net.core.rmem_max %d is too small to pin a reading client's buffer", rcvbuf)
	}
	turnBytes := chunks * chunkSize
	turns := (wmemMax+1<<20)/turnBytes + 2
	g, _ := testAgentGateway(t, "flood", "--write-timeout", "10s", "--log-max-frames", "1000000", "--log-max-bytes", "4294967296")
	s := g.createSession(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dialCtx, cancelDial := context.WithTimeout(ctx, 60*time.Second)
	defer cancelDial()

	// The stalled client: a small receive buffer; reads up to replay_complete, then never again.
	dialer := smallReceiveDialer()
	stalled, err := dialer.DialContext(dialCtx, "tcp", strings.TrimPrefix(g.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "GET /v1/sessions/%s/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", s.ID, strings.TrimPrefix(g.base, "http://"))
	br := bufio.NewReader(stalled)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stalled client before replay_complete: %v", err)
		}
		if strings.Contains(line, "_gateway/replay_complete") {
			break
		}
	}

	bigReceive := &http.Transport{DialContext: receiveBufferDialer(rcvbuf).DialContext}
	defer bigReceive.CloseIdleConnections()
	reader := readSSE(ctx, g, s.ID, &http.Client{Transport: contractTransport{next: bigReceive}})
	clients := func() int {
		var v struct{ Clients int }
		g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
		return v.Clients
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitUntil("both clients attached", func() bool { return clients() == 2 })

	var head uint64
	for i := range turns {
		var res struct{ TurnID, StopReason string }
		if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", fmt.Sprintf(`{"text":"%d %d"}`, chunks, chunkSize), &res); code != http.StatusOK || res.StopReason != "end_turn" {
			t.Fatalf("turn %d: %d %+v", i, code, res)
		}
		var v sessionJSON
		g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
		head = v.LastSeq
		// The reading client keeps up turn by turn, so it never lags past the event stream's bounds.
		waitUntil("the reading client to see turn "+strconv.Itoa(i), func() bool {
			last, err := reader.last()
			if err != nil {
				t.Fatalf("reading client ended at seq %d: %v", last, err)
			}
			return last >= head
		})
	}

	// The stalled client's write is stuck on a full socket: the watchdog ends it and frees its slot.
	start := time.Now()
	waitUntil("the stalled client to be dropped", func() bool { return clients() == 1 })
	t.Logf("%d turns (%d MiB; tcp_wmem max %d KiB); stalled client dropped %s after the flood", turns, turns*turnBytes>>20, wmemMax>>10, time.Since(start).Round(time.Millisecond))

	// The reading client is still connected and has the whole log, byte for byte.
	if last, err := reader.last(); err != nil || last != head {
		t.Fatalf("reading client at seq %d of %d (err %v)", last, head, err)
	}
	full, _ := g.walkPages(t, s.ID, 1000) // pages: a socket reader with autotuned buffers could meet the write watchdog
	reader.mu.Lock()
	got := reader.frames
	reader.mu.Unlock()
	for i, e := range got {
		if !bytes.Equal(e.Raw, full[i].Raw) {
			t.Fatalf("frame %d differs from the log", e.Seq)
		}
	}
	cancel()
	<-reader.done
}
