package jsstore_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

func tickets(t testing.TB, srv *natstest.Server) *jsstore.Tickets {
	t.Helper()
	tk, err := open(t, srv, jsstore.Options{}).Tickets(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestTicketMintedOnARedeemedOnB: a ticket minted through one connection is redeemed through another with
// its principal and session; a second redemption fails; an unknown ticket fails.
func TestTicketMintedOnARedeemedOnB(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	a, b := tickets(t, srv), tickets(t, srv)
	who := principal.Principal{ID: "u1", Name: "Ann", Role: principal.RoleUser}
	tok, exp, err := a.Mint(ctxT(t), "s1", who)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(exp); d <= 0 || d > jsstore.TicketTTL {
		t.Fatalf("expires in %v", d)
	}
	g, err := b.Redeem(ctxT(t), tok, "s1")
	if err != nil || g.Principal != who || g.Session != "s1" {
		t.Fatalf("redeem: %+v %v", g, err)
	}
	if _, err := a.Redeem(ctxT(t), tok, "s1"); !errors.Is(err, jsstore.ErrTicketInvalid) {
		t.Fatalf("second redemption: %v", err)
	}
	if _, err := b.Redeem(ctxT(t), "no-such-ticket", ""); !errors.Is(err, jsstore.ErrTicketInvalid) {
		t.Fatalf("unknown ticket: %v", err)
	}
}

// TestTicketBinding: a ticket bound to a session is refused (and used up) on another session's stream; an
// unbound one opens any stream.
func TestTicketBinding(t *testing.T) {
	t.Parallel()
	tk := tickets(t, natstest.Embedded(t))
	who := principal.Principal{ID: "u1", Role: principal.RoleUser}
	bound, _, err := tk.Mint(ctxT(t), "s1", who)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Redeem(ctxT(t), bound, "s2"); !errors.Is(err, jsstore.ErrTicketInvalid) {
		t.Fatalf("bound ticket on another session: %v", err)
	}
	if _, err := tk.Redeem(ctxT(t), bound, "s1"); !errors.Is(err, jsstore.ErrTicketInvalid) {
		t.Fatalf("bound ticket after a wrong presentation: %v", err)
	}
	free, _, err := tk.Mint(ctxT(t), "", who)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := tk.Redeem(ctxT(t), free, "s9"); err != nil || g.Principal != who {
		t.Fatalf("unbound ticket: %+v %v", g, err)
	}
}

// TestTicketRedeemRace: many redeemers on different connections present one ticket at once; exactly one wins.
func TestTicketRedeemRace(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	const n = 8
	tks := make([]*jsstore.Tickets, n)
	for i := range tks {
		tks[i] = tickets(t, srv)
	}
	for round := 0; round < 20; round++ {
		tok, _, err := tks[0].Mint(ctxT(t), "s1", principal.Principal{ID: "u1"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for _, tk := range tks {
			wg.Go(func() {
				_, err := tk.Redeem(ctxT(t), tok, "s1")
				if err != nil && !errors.Is(err, jsstore.ErrTicketInvalid) {
					t.Error(err)
				}
				if err == nil {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("round %d: %d redemptions won", round, wins)
		}
	}
}

// TestTicketKeyIsNotTheTicket: what the bucket holds cannot be presented as a ticket.
func TestTicketKeyIsNotTheTicket(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	tk := tickets(t, srv)
	tok, _, err := tk.Mint(ctxT(t), "", principal.Principal{ID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	keys := bucketKeys(t, srv, "acpgw-tickets")
	if len(keys) != 1 || keys[0] == tok {
		t.Fatalf("bucket keys %v for ticket %q", keys, tok)
	}
	if _, err := tk.Redeem(ctxT(t), keys[0], ""); !errors.Is(err, jsstore.ErrTicketInvalid) {
		t.Fatalf("the bucket key redeemed as a ticket: %v", err)
	}
}

// bucketKeys lists a KV bucket's keys through a plain connection.
func bucketKeys(t testing.TB, srv *natstest.Server, bucket string) []string {
	t.Helper()
	js, err := jetstream.New(srv.Connect())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctxT(t), bucket)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
