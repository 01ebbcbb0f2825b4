package jsstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// A takeover forks the log in a new epoch while the old owner's writer still runs (a paused process that
// resumes): what the old owner appends afterwards is refused by the store, never stored, and its writer stops
// with ErrFenced.
func TestPersistRefusedAfterTakeover(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{Fence: true})
	refusedAfterTakeover(t, st, st)
}

// refusedAfterTakeover runs the takeover on session s1 with owner writing and taker forking.
func refusedAfterTakeover(t *testing.T, owner, taker *jsstore.Store) {
	t.Helper()
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
	p := owner.Persist("s1", "e1", l, 0)
	defer p.Stop()
	appendFrames(t, l, 1, 3, never)
	flush(t, p)

	_, fence := feedAll(t, taker, "s1")
	if err := taker.Fork(ctxT(t), "s1", fence, []store.StoredFrame{{Seq: 4, Epoch: "e2", Frame: frameOf(4, false)}}); err != nil {
		t.Fatalf("takeover fork: %v", err)
	}
	appendFrames(t, l, 4, 5, never) // the retired owner goes on

	ctx, cancel := context.WithTimeout(ctxT(t), 30*time.Second)
	defer cancel()
	err := p.Flush(ctx)
	if got, want := storedIDs(t, taker.Conn(), "acpgw-log", "acpgw.log.s1"), []string{"e1.1", "e1.2", "e1.3", "e2.4"}; !slices.Equal(got, want) {
		t.Fatalf("stored messages %v, want %v (Flush: %v)", got, want, err)
	}
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Flush of the retired owner: %v, want ErrFenced", err)
	}
	select {
	case <-p.Fenced():
	default:
		t.Fatal("Fenced() not closed")
	}
	if d := p.Durable(); d != 3 {
		t.Fatalf("Durable() of the retired owner = %d, want 3", d)
	}
}

// A writer that starts on a log that already holds frames (a restore, a re-attach) appends after them: the
// subject's last message is no other owner's write.
func TestPersistFenceStartsAfterStoredLog(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{Fence: true})
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
	p := st.Persist("s1", "e1", l, 0)
	appendFrames(t, l, 1, 3, never)
	flush(t, p)
	p.Stop()

	l2 := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
	for _, f := range mustStored(t, st, "s1") {
		if err := l2.Put(f.Seq, eventlog.KindUpdate, f.Frame); err != nil {
			t.Fatal(err)
		}
	}
	p2 := st.Persist("s1", "e1", l2, 3)
	defer p2.Stop()
	appendFrames(t, l2, 4, 6, never)
	flush(t, p2)
	stored, _ := feedAll(t, st, "s1")
	checkFrames(t, stored, "e1", 6, never)
}

// mustStored is the stored log of sid.
func mustStored(t *testing.T, st *jsstore.Store, sid string) []store.StoredFrame {
	t.Helper()
	stored, _ := feedAll(t, st, sid)
	return stored
}

// storedIDs lists the msg-ids of every message stored on subject, in stream order, each read from the
// stream's leader (a direct get may be answered by a replica that is behind).
func storedIDs(t *testing.T, nc *nats.Conn, stream, subject string) []string {
	t.Helper()
	var ids []string
	for _, h := range storedHeaders(t, nc, stream, subject) {
		ids = append(ids, h.Get(jetstream.MsgIDHeader))
	}
	return ids
}

// storedHeaders lists the headers of every message stored on subject, as storedIDs reads them.
func storedHeaders(t *testing.T, nc *nats.Conn, stream, subject string) []nats.Header {
	t.Helper()
	var hs []nats.Header
	for _, m := range storedMessages(t, nc, stream, subject) {
		hs = append(hs, m.header)
	}
	return hs
}

// storedMessage is a stored message's headers and its size as sent (encoded headers and data).
type storedMessage struct {
	header nats.Header
	bytes  int
}

// storedMessages lists every message stored on subject, as storedIDs reads them.
func storedMessages(t *testing.T, nc *nats.Conn, stream, subject string) []storedMessage {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctxT(t), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []storedMessage
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		req, _ := json.Marshal(map[string]uint64{"seq": seq})
		msg, err := nc.RequestWithContext(ctxT(t), "$JS.API.STREAM.MSG.GET."+stream, req)
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Error   *jetstream.APIError `json:"error"`
			Message *struct {
				Subject string `json:"subject"`
				Header  []byte `json:"hdrs"`
				Data    []byte `json:"data"`
			} `json:"message"`
		}
		if err := json.Unmarshal(msg.Data, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound {
			continue
		}
		if resp.Error != nil || resp.Message == nil {
			t.Fatalf("stream message %d: %v", seq, resp.Error)
		}
		if resp.Message.Subject != subject {
			continue
		}
		h, err := nats.DecodeHeadersMsg(resp.Message.Header)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, storedMessage{header: h, bytes: len(resp.Message.Header) + len(resp.Message.Data)})
	}
	return out
}
