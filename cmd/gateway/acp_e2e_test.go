package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// dialACP opens a raw ACP socket and sends one request per message, reading each answer.
func dialACP(t *testing.T, g *gateway, ctx context.Context, requests ...string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, g.wsURL("/acp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	for i, req := range requests {
		if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			t.Fatal(err)
		}
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			var m struct {
				ID    json.RawMessage
				Error json.RawMessage
			}
			_ = json.Unmarshal(data, &m)
			if m.ID == nil {
				continue // a notification
			}
			if m.Error != nil {
				t.Fatalf("request %d: %s", i, data)
			}
			break
		}
	}
	return c
}

const acpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`

// TestACPPingDropsSilentClient: --ws-ping-interval applies to `/acp` too: a socket that stops reading never
// answers pings and is dropped (its session subscription ends), as on the session WebSocket.
func TestACPPingDropsSilentClient(t *testing.T) {
	g := startGateway(t, "--ws-ping-interval", "150ms")
	s := g.createSession(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dialACP(t, g, ctx, acpInitialize, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":%q}}`, s.ID))

	clients := func() int {
		var v struct{ Clients int }
		g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
		return v.Clients
	}
	deadline := time.Now().Add(20 * time.Second)
	for clients() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the silent /acp client was never dropped (clients %d)", clients())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestACPMetrics: `/acp` sockets count in the per-face metrics: connected clients and frames sent.
func TestACPMetrics(t *testing.T) {
	g := startGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	metric := func(name string) float64 {
		resp, err := http.Get(g.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	c := dialACP(t, g, ctx, acpInitialize)
	if got := metric(`gateway_clients{face="acp"}`); got != 1 {
		t.Fatalf(`gateway_clients{face="acp"} = %v with one socket open`, got)
	}
	if got := metric(`gateway_frames_sent_total{face="acp"}`); got < 1 {
		t.Fatalf(`gateway_frames_sent_total{face="acp"} = %v after an answer`, got)
	}
	if got := metric(`gateway_bytes_sent_total{face="acp"}`); got < float64(len(`{"jsonrpc":"2.0","id":1,"result":{}}`)) {
		t.Fatalf(`gateway_bytes_sent_total{face="acp"} = %v after an answer`, got)
	}
	c.Close(websocket.StatusNormalClosure, "")
	for deadline := time.Now().Add(20 * time.Second); metric(`gateway_clients{face="acp"}`) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(`gateway_clients{face="acp"} stayed up after the socket closed`)
		}
	}
}

// TestACPSlowClientEvicted: an `/acp` socket that stops reading while its session floods is closed with 4001
// once it lags past --ws-queue-frames (the same log cursor as the session WebSocket), and the eviction is
// counted for the acp face. It is sized like TestDeliverySlowClientEvicted, and like it has no ping, no write
// timeout and no deadline that a flood lasting minutes on a loaded machine could reach.
func TestACPSlowClientEvicted(t *testing.T) {
	const (
		chunks    = 200
		chunkSize = 2000
		queue     = 300
	)
	wmemMax := readSysctlMax(t, "/proc/sys/net/ipv4/tcp_wmem")
	turns := (wmemMax+1<<20)/(chunks*chunkSize) + 4
	g, _ := testAgentGateway(t, "flood", "--ws-queue-frames", strconv.Itoa(queue), "--write-timeout", "10m", "--ws-ping-interval", "10m", "--log-max-frames", "1000000", "--log-max-bytes", "4294967296")
	s := g.createSession(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dialer := smallReceiveDialer()
	slow, _, err := websocket.Dial(ctx, g.wsURL("/acp"), &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: contractTransport{next: &http.Transport{DialContext: dialer.DialContext}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	slow.SetReadLimit(64 << 20)
	for i, req := range []string{acpInitialize, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":%q}}`, s.ID)} {
		if err := slow.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			t.Fatal(err)
		}
		if _, data, err := slow.Read(ctx); err != nil || !strings.Contains(string(data), `"result"`) {
			t.Fatalf("request %d: %s %v", i, data, err)
		}
	}
	// The socket now stops reading while every turn floods the session.
	for i := range turns {
		var res struct{ StopReason string }
		if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", fmt.Sprintf(`{"text":"%d %d"}`, chunks, chunkSize), &res); code != http.StatusOK || res.StopReason != "end_turn" {
			t.Fatalf("turn %d: %d %+v", i, code, res)
		}
	}
	cancel()
	readCtx, cancelRead := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancelRead()
	n := 0
	for {
		_, _, err := slow.Read(readCtx)
		if err != nil {
			if st := websocket.CloseStatus(err); st != 4001 {
				t.Fatalf("slow /acp client ended with %v (status %d) after %d frames, want 4001", err, st, n)
			}
			break
		}
		n++
	}
	var v sessionJSON
	g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
	if uint64(n) >= v.LastSeq {
		t.Fatalf("the slow client read %d frames of %d and was still evicted", n, v.LastSeq)
	}
	resp, err := http.Get(g.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !regexp.MustCompile(`(?m)^gateway_slow_client_evictions_total\{face="acp"\} 1$`).Match(b) {
		t.Fatalf("acp eviction not counted:\n%s", regexp.MustCompile(`(?m)^gateway_slow_client.*$`).FindAll(b, -1))
	}
}
