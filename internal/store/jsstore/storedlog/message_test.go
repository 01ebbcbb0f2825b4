package storedlog

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/acp-gateway/gateway/internal/store"
)

// A frame written as parts, a gap marker and a message the gateway did not write, read back through
// Folder.Message: the frame comes out whole, the gap as a gap, and the foreign message only as an anomaly.
func TestMessagesReadBack(t *testing.T) {
	var msgs []*nats.Msg
	msgs = append(msgs, FrameMsgs("s", "e1", 1, []byte("one"), 8)...)
	big := FrameMsgs("s", "e1", 2, []byte("a frame of three parts"), 8)
	if len(big) != 3 {
		t.Fatalf("a 22-byte frame in parts of 8 is %d messages, want 3", len(big))
	}
	msgs = append(msgs, big...)
	msgs = append(msgs, GapMsg("s", "e1", 3, 4), &nats.Msg{Subject: "s", Header: nats.Header{}, Data: []byte("foreign")})
	msgs = append(msgs, FrameMsgs("s", "e1", 5, []byte("five"), 8)...)

	var out []store.StoredFrame
	f := NewFolder(16, func(fr store.StoredFrame) error { out = append(out, fr); return nil })
	for i, m := range msgs {
		if err := f.Message(uint64(i+1), m.Header, m.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Settle(); err != nil {
		t.Fatal(err)
	}
	want := []store.StoredFrame{
		{Seq: 1, Epoch: "e1", Frame: []byte("one")},
		{Seq: 2, Epoch: "e1", Frame: []byte("a frame of three parts")},
		{Seq: 3, Epoch: "e1", GapTo: 4},
		{Seq: 5, Epoch: "e1", Frame: []byte("five")},
	}
	if len(out) != len(want) {
		t.Fatalf("read back %d frames, want %d: %+v", len(out), len(want), out)
	}
	for i, fr := range out {
		w := want[i]
		if fr.Seq != w.Seq || fr.Epoch != w.Epoch || fr.GapTo != w.GapTo || string(fr.Frame) != string(w.Frame) {
			t.Fatalf("frame %d = %+v, want %+v", i, fr, w)
		}
	}
	if f.anomalies != 1 {
		t.Fatalf("anomalies = %d, want 1 (the foreign message)", f.anomalies)
	}
}

// Parse names what a stored message holds, so a writer can tell where the subject's last message leaves it.
func TestParse(t *testing.T) {
	last := FrameMsgs("s", "e2", 7, []byte("0123456789"), 4)[2]
	r, err := Parse(42, last.Header, last.Data)
	if err != nil {
		t.Fatal(err)
	}
	if r.StreamSeq != 42 || r.Epoch != "e2" || r.Seq != 7 || r.Part != 3 || r.Parts != 3 || string(r.Data) != "89" {
		t.Fatalf("Parse = %+v, want part 3 of 3 of e2/7 at stream seq 42", r)
	}
	gap := GapMsg("s", "e2", 8, 9)
	if r, err := Parse(43, gap.Header, nil); err != nil || r.Epoch != "e2" || r.Seq != 8 || r.GapTo != 9 {
		t.Fatalf("Parse(gap) = %+v, %v; want e2 8-9", r, err)
	}
	for _, h := range []nats.Header{
		{},
		{"Nats-Msg-Id": []string{"e2.0"}},
		{"Nats-Msg-Id": []string{"e2.7.2"}, hdrPart: []string{"3/3"}},
		{"Nats-Msg-Id": []string{"e2.8-9"}, hdrGap: []string{"9-8"}},
	} {
		if _, err := Parse(1, h, nil); err == nil {
			t.Errorf("Parse(%v) accepted a message the gateway does not write", h)
		}
	}
}
