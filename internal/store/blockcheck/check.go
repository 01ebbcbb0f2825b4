package blockcheck

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/minio/highwayhash"
)

// The embedded server trusts its block files: a record whose sequence number was damaged makes its cache
// index fill the "hole" up to that number (nats-server v2.15 filestore.go, msgBlock.indexCacheBuf), an
// allocation without bound, because it defers the records' checksums to each message's first read. So the
// blocks are checked here, record by record, before the server opens them (checkBlock), and a damaged block
// is cut at its first bad record (repair.go).

// The record layout of nats-server's file store (filestore.go: msgHdrSize, recordHashSize, hbit, rlBadThresh):
// rl uint32 (bit 31: the record has headers) | seq uint64 | ts int64 | subject length uint16 | subject |
// [headers length uint32 | headers] | payload | highwayhash-64 of seq, ts, subject, headers and payload, keyed
// with the SHA-256 of "<stream>-<block index>".
const (
	recHdrSize   = 22
	recHashSize  = 8
	recHdrBit    = 1 << 31
	recMaxLength = 32 << 20
)

// blockCheck is what checking one block found.
type blockCheck struct {
	good    int64  // bytes of whole, verified records from the start of the block
	records int    // how many
	lastSeq uint64 // the last verified record's sequence (tombstone and erase bits cleared)
	bad     string // why the record at good is not one; "" when the whole block verified
}

// checkBlock verifies the records of the block file path, block index of stream, in order, reading one record at
// a time (memory stays under recMaxLength).
func checkBlock(path, stream string, index uint64) (blockCheck, error) {
	f, err := os.Open(path)
	if err != nil {
		return blockCheck{}, err
	}
	defer f.Close()
	key := sha256.Sum256(fmt.Appendf(nil, "%s-%d", stream, index))
	hh, err := highwayhash.NewDigest64(key[:])
	if err != nil {
		return blockCheck{}, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var c blockCheck
	var hdr [recHdrSize]byte
	var sum [recHashSize]byte
	var data []byte
	le := binary.LittleEndian
	for {
		n, err := io.ReadFull(r, hdr[:])
		switch {
		case err == io.EOF:
			return c, nil
		case errors.Is(err, io.ErrUnexpectedEOF):
			c.bad = fmt.Sprintf("a record header cut short (%d of %d bytes)", n, recHdrSize)
			return c, nil
		case err != nil:
			return c, err
		}
		rl := le.Uint32(hdr[0:])
		hasHeaders := rl&recHdrBit != 0
		rl &^= recHdrBit
		slen := int(le.Uint16(hdr[20:]))
		dlen := int(rl) - recHdrSize
		shlen := slen
		if hasHeaders {
			shlen += 4
		}
		if rl > recMaxLength || dlen < recHashSize || shlen > dlen-recHashSize {
			c.bad = fmt.Sprintf("a record header out of bounds (length %d, subject %d)", rl, slen)
			return c, nil
		}
		if cap(data) < dlen {
			data = make([]byte, dlen)
		}
		data = data[:dlen]
		if n, err := io.ReadFull(r, data); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
				c.bad = fmt.Sprintf("a record cut short (%d of %d bytes)", recHdrSize+n, rl)
				return c, nil
			}
			return c, err
		}
		body := data[slen : dlen-recHashSize]
		if hasHeaders {
			hl := int(le.Uint32(data[slen:]))
			if hl > len(body)-4 {
				c.bad = fmt.Sprintf("a record's headers out of bounds (%d bytes)", hl)
				return c, nil
			}
			body = body[4:]
		}
		hh.Reset()
		hh.Write(hdr[4:20])
		hh.Write(data[:slen])
		hh.Write(body)
		if !bytes.Equal(hh.Sum(sum[:0]), data[dlen-recHashSize:]) {
			c.bad = "a record's checksum does not match"
			return c, nil
		}
		c.good += int64(rl)
		c.records++
		c.lastSeq = le.Uint64(hdr[4:]) &^ (1<<63 | 1<<62)
	}
}

// streamBlocks lists the block files of the stream in dir (a JetStream stream directory), by index.
func streamBlocks(dir string) ([]uint64, error) {
	names, err := os.ReadDir(filepath.Join(dir, "msgs"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, de := range names {
		num, ok := strings.CutSuffix(de.Name(), ".blk")
		if !ok || !de.Type().IsRegular() {
			continue
		}
		if i, err := strconv.ParseUint(num, 10, 32); err == nil {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out, nil
}

// plainStream reports whether the stream in dir stores its blocks as written (neither compressed nor
// encrypted), which is how Open creates them; other blocks are not checked.
func plainStream(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "meta.inf"))
	if err != nil {
		return false
	}
	var meta struct {
		Compression string `json:"compression"`
	}
	if json.Unmarshal(b, &meta) != nil { // an encrypted stream's meta.inf is not JSON
		return false
	}
	return meta.Compression == "" || meta.Compression == "none"
}
