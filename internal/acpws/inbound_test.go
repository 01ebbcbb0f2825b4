package acpws

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/inbound"
	"github.com/coder/websocket"
)

// TestInboundBudgetSharedByBothFaces: `/acp` and `/v1/sessions/{id}/ws` sockets sending large frames at once
// never hold more than the shared inbound budget (its high-water mark). Each large frame is answered or its
// socket is closed with 1013; at least one gets through; a client sending small requests meanwhile gets every
// answer; and the budget is all released afterwards.
func TestInboundBudgetSharedByBothFaces(t *testing.T) {
	const total, big, perFace, small = 1 << 20, 900 << 10, 4, 20
	budget := inbound.New(total, time.Minute)
	e := newEnv(t, Options{ReadLimit: total, Inbound: budget})
	owner := e.dial("/acp")
	owner.initialize()
	sid := owner.newSession(e.dir)

	pad := strings.Repeat("p", big)
	type bigSocket struct {
		cl    *client
		frame []byte
	}
	var sockets []bigSocket
	for range perFace {
		sockets = append(sockets,
			bigSocket{e.dial("/acp"), []byte(`{"jsonrpc":"2.0","id":1,"method":"no/such","params":{"pad":"` + pad + `"}}`)},
			bigSocket{e.dial("/v1/sessions/" + sid + "/ws"), []byte(`{"jsonrpc":"2.0","id":"none","result":{"pad":"` + pad + `"}}`)})
	}
	normal := e.dial("/acp")

	outcomes := make(chan string, len(sockets))
	var wg sync.WaitGroup
	for _, s := range sockets {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
			defer cancel()
			if err := s.cl.c.Write(ctx, websocket.MessageText, s.frame); err != nil {
				outcomes <- "write: " + err.Error()
				return
			}
			for {
				m, err := s.cl.tryNext(stepTimeout)
				switch {
				case websocket.CloseStatus(err) == websocket.StatusTryAgainLater:
					outcomes <- "1013"
					return
				case err != nil:
					outcomes <- "read: " + err.Error()
					return
				case m.isResponse() && m.Error != nil:
					outcomes <- "answered"
					return
				}
			}
		})
	}
	for i := range small {
		_, resp := normal.call("no/such", map[string]any{"n": i})
		if resp.Error == nil || resp.Error.Code != jsonrpc.MethodNotFound {
			t.Fatalf("small request %d: %s", i, resp.raw)
		}
	}
	wg.Wait()
	close(outcomes)
	answered, refused := 0, 0
	for o := range outcomes {
		switch o {
		case "answered":
			answered++
		case "1013":
			refused++
		default:
			// The gateway may close with 1013 while the client is still writing the frame.
			if !strings.Contains(o, "1013") && !strings.Contains(o, "broken pipe") && !strings.Contains(o, "reset by peer") {
				t.Errorf("large frame: %s", o)
			}
			refused++
		}
	}
	if answered == 0 {
		t.Fatalf("no large frame got through (%d refused)", refused)
	}
	if peak := budget.Peak(); peak > total || peak < big {
		t.Fatalf("peak %d bytes held by readers; budget %d, one large frame %d", peak, total, big)
	}
	waitFor(t, "the budget released", func() bool { return budget.InUse() == 0 })
	t.Logf("%d large frames answered, %d refused with 1013; peak %d of %d bytes", answered, refused, budget.Peak(), total)
}
