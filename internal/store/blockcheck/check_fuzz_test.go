package blockcheck

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/minio/highwayhash"
)

// blockRecord encodes one record as nats-server's file store writes it (check.go has the layout).
func blockRecord(stream string, index, seq uint64, subject string, hdrs, payload []byte) []byte {
	le := binary.LittleEndian
	shlen := len(subject)
	if hdrs != nil {
		shlen += 4
	}
	rl := uint32(recHdrSize + shlen + len(hdrs) + len(payload) + recHashSize)
	rec := make([]byte, 0, rl)
	lenField := rl
	if hdrs != nil {
		lenField |= recHdrBit
	}
	rec = le.AppendUint32(rec, lenField)
	rec = le.AppendUint64(rec, seq)
	rec = le.AppendUint64(rec, 1_700_000_000_000_000_000+seq)
	rec = le.AppendUint16(rec, uint16(len(subject)))
	rec = append(rec, subject...)
	if hdrs != nil {
		rec = le.AppendUint32(rec, uint32(len(hdrs)))
		rec = append(rec, hdrs...)
	}
	rec = append(rec, payload...)
	key := sha256.Sum256(fmt.Appendf(nil, "%s-%d", stream, index))
	hh, _ := highwayhash.NewDigest64(key[:])
	hh.Write(rec[4:20])
	hh.Write([]byte(subject))
	hh.Write(hdrs)
	hh.Write(payload)
	return hh.Sum(rec)
}

// FuzzCheckBlock: whatever bytes a block file holds, checkBlock returns (no panic, no allocation beyond one
// record's bound) with the verified prefix inside the file, the whole file when it found nothing bad, and a
// prefix of valid records followed by anything is verified up to there.
func FuzzCheckBlock(f *testing.F) {
	const stream, index = "acpgw-log", 3
	good := append(blockRecord(stream, index, 1, "acpgw.log.s1", nil, []byte(`{"seq":1}`)),
		blockRecord(stream, index, 2, "acpgw.log.s1", []byte("NATS/1.0\r\nNats-Msg-Id: e.2\r\n\r\n"), []byte(`{"seq":2}`))...)
	f.Add(good, 0)
	f.Add(good, len(good)/2)
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f}, 0)
	f.Add(make([]byte, recHdrSize), 0)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, tail []byte, cut int) {
		prefix := good[:max(0, min(cut, len(good)))]
		whole := len(prefix) == len(good)
		data := append(append([]byte(nil), prefix...), tail...)
		path := filepath.Join(dir, "3.blk")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := checkBlock(path, stream, index)
		if err != nil {
			t.Fatalf("checkBlock: %v", err)
		}
		if c.good < 0 || c.good > int64(len(data)) {
			t.Fatalf("verified %d bytes of %d", c.good, len(data))
		}
		if c.bad == "" && c.good != int64(len(data)) {
			t.Fatalf("nothing bad found, yet %d of %d bytes verified", c.good, len(data))
		}
		if whole && c.good < int64(len(good)) {
			t.Fatalf("two valid records then %d bytes: verified only %d bytes (%s)", len(tail), c.good, c.bad)
		}
	})
}
