package storedlog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers of a stored message. The body is the frame exactly as the live log held it (or one part of it); the
// msg-id carries epoch and seq, so nothing else about a frame is stored.
const (
	hdrPart = "Acpgw-Part" // "i/n": the i-th of n parts of one frame (1-based)
	hdrGap  = "Acpgw-Gap"  // "from-to": frames from..to were never stored
)

// PartOverhead is what a message's headers and protocol line may take out of the connection's MaxPayload.
const PartOverhead = 1024

// Record is one stored message as the reader rule sees it.
type Record struct {
	StreamSeq uint64 // the message's stream sequence
	Epoch     string
	Seq       uint64 // the frame's seq; the first missing seq of a gap marker
	GapTo     uint64 // > 0: a gap marker for Seq..GapTo
	Part      int    // 1-based part index; 1 of 1 for a whole frame
	Parts     int
	Data      []byte
}

// msgID is the dedupe id of a frame, of one of its parts, or of a gap marker.
func msgID(epoch string, seq uint64, part, parts int) string {
	id := epoch + "." + strconv.FormatUint(seq, 10)
	if parts > 1 {
		id += "." + strconv.Itoa(part)
	}
	return id
}

func gapID(epoch string, from, to uint64) string {
	return epoch + "." + strconv.FormatUint(from, 10) + "-" + strconv.FormatUint(to, 10)
}

// FrameMsgs returns the messages of one frame: one, or n parts of at most partSize bytes each.
func FrameMsgs(subject, epoch string, seq uint64, frame []byte, partSize int) []*nats.Msg {
	parts := max(1, (len(frame)+partSize-1)/partSize)
	msgs := make([]*nats.Msg, parts)
	for i := range parts {
		body := frame[i*partSize : min(len(frame), (i+1)*partSize)]
		m := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{}}
		m.Header.Set(jetstream.MsgIDHeader, msgID(epoch, seq, i+1, parts))
		if parts > 1 {
			m.Header.Set(hdrPart, strconv.Itoa(i+1)+"/"+strconv.Itoa(parts))
		}
		msgs[i] = m
	}
	return msgs
}

// GapMsg returns the marker that frames from..to of epoch were never stored.
func GapMsg(subject, epoch string, from, to uint64) *nats.Msg {
	m := &nats.Msg{Subject: subject, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, gapID(epoch, from, to))
	m.Header.Set(hdrGap, strconv.FormatUint(from, 10)+"-"+strconv.FormatUint(to, 10))
	return m
}

var errBadRecord = errors.New("storedlog: malformed stored message")

// Parse reads a stored message's headers. A message the gateway did not write is an error, which the
// reader counts as an anomaly and skips.
func Parse(streamSeq uint64, h nats.Header, data []byte) (Record, error) {
	r := Record{StreamSeq: streamSeq, Part: 1, Parts: 1, Data: data}
	id := h.Get(jetstream.MsgIDHeader)
	if gap := h.Get(hdrGap); gap != "" {
		from, to, ok := splitRange(gap)
		dot := strings.LastIndexByte(id, '.')
		if !ok || dot <= 0 || from == 0 || to < from {
			return r, fmt.Errorf("%w: gap %q id %q", errBadRecord, gap, id)
		}
		r.Epoch, r.Seq, r.GapTo, r.Data = id[:dot], from, to, nil
		return r, nil
	}
	if p := h.Get(hdrPart); p != "" {
		i, n, ok := strings.Cut(p, "/")
		part, err1 := strconv.Atoi(i)
		parts, err2 := strconv.Atoi(n)
		dot := strings.LastIndexByte(id, '.')
		if !ok || err1 != nil || err2 != nil || part < 1 || part > parts || dot <= 0 || id[dot+1:] != i {
			return r, fmt.Errorf("%w: part %q id %q", errBadRecord, p, id)
		}
		r.Part, r.Parts, id = part, parts, id[:dot]
	}
	dot := strings.LastIndexByte(id, '.')
	if dot <= 0 {
		return r, fmt.Errorf("%w: id %q", errBadRecord, id)
	}
	seq, err := strconv.ParseUint(id[dot+1:], 10, 64)
	if err != nil || seq == 0 {
		return r, fmt.Errorf("%w: id %q", errBadRecord, id)
	}
	r.Epoch, r.Seq = id[:dot], seq
	return r, nil
}

func splitRange(s string) (from, to uint64, ok bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, false
	}
	from, err1 := strconv.ParseUint(a, 10, 64)
	to, err2 := strconv.ParseUint(b, 10, 64)
	return from, to, err1 == nil && err2 == nil
}
