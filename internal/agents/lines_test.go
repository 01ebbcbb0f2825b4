package agents

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestNoisePrefixEndsOnACharacter: the prefix of a long non-JSON line is cut before a character the
// noiseKeep limit would split, so a valid line is not shown with a spurious U+FFFD.
func TestNoisePrefixEndsOnACharacter(t *testing.T) {
	var got []byte
	var total int
	w := &lineWatch{onNoise: func(prefix []byte, n int) { got, total = append([]byte(nil), prefix...), n }}
	line := strings.Repeat("€", 200) // 600 bytes; noiseKeep falls inside a €
	w.scan([]byte(line + "\n"))
	if !utf8.Valid(got) || len(got) != noiseKeep/3*3 || total != len(line) {
		t.Fatalf("prefix of %d bytes (valid %v), total %d", len(got), utf8.Valid(got), total)
	}
	// A short line keeps its bytes as written, invalid ones included (the log's encoder replaces them).
	w.scan([]byte("bad \xff\n"))
	if string(got) != "bad \xff" {
		t.Fatalf("short line prefix %q", got)
	}
}

// scanByteByByte is lineWatch.scan as it was before its fast path: the reference FuzzLineWatchScan holds
// the fast path to.
func (w *lineWatch) scanByteByByte(p []byte) {
	for _, c := range p {
		if c == '\n' {
			w.endLine()
			continue
		}
		w.length++
		if w.length == maxLineBytes {
			w.tooLong = true
		}
		if !w.started {
			if c == ' ' || c == '\t' || c == '\r' {
				continue
			}
			w.started, w.json = true, c == '{'
		}
		if !w.json && len(w.keep) < noiseKeep {
			w.keep = append(w.keep, c)
		}
	}
}

// FuzzLineWatchScan: scan reports the same noise (prefix and length of every non-JSON line), in the same
// order, and leaves the same state as the byte-by-byte reference, however stdout is cut into reads.
func FuzzLineWatchScan(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\nnoise here\n  {\"a\":1}\n\t\r\nx"), uint8(3))
	f.Add([]byte(strings.Repeat("€", 200)+"\n"+"{"+strings.Repeat("a", 700)+"\nb"), uint8(7))
	f.Add([]byte("\n\n \n{\n}\n"), uint8(1))
	f.Fuzz(func(t *testing.T, out []byte, cut uint8) {
		type noise struct {
			prefix string
			total  int
		}
		var fast, ref []noise
		fw := &lineWatch{onNoise: func(p []byte, n int) { fast = append(fast, noise{string(p), n}) }}
		rw := &lineWatch{onNoise: func(p []byte, n int) { ref = append(ref, noise{string(p), n}) }}
		rw.scanByteByByte(out)
		step := int(cut)%64 + 1
		for rest := out; len(rest) > 0; {
			n := min(step, len(rest))
			fw.scan(rest[:n])
			rest = rest[n:]
		}
		if len(fast) != len(ref) {
			t.Fatalf("noise %+v, want %+v", fast, ref)
		}
		for i := range ref {
			if fast[i] != ref[i] {
				t.Fatalf("noise %d: %+v, want %+v", i, fast[i], ref[i])
			}
		}
		if fw.started != rw.started || fw.json != rw.json || fw.length != rw.length || string(fw.keep) != string(rw.keep) || fw.tooLong != rw.tooLong {
			t.Fatalf("state %+v, want %+v", fw, rw)
		}
	})
}

// TestLineWatchTooLong: a JSON line reaching the SDK's limit is remembered whether the read that crosses
// the limit ends there, past it, or in the next line.
func TestLineWatchTooLong(t *testing.T) {
	for _, tail := range []int{0, 1, 1000} {
		w := &lineWatch{}
		w.scan([]byte("{"))
		chunk := make([]byte, 1<<16)
		for i := range chunk {
			chunk[i] = 'a'
		}
		for w.length+len(chunk) < maxLineBytes-1 {
			w.scan(chunk)
		}
		if w.sawTooLong() {
			t.Fatalf("too long at %d bytes", w.length)
		}
		w.scan(chunk[:maxLineBytes-w.length-1])
		if w.sawTooLong() {
			t.Fatalf("too long at %d bytes, one short of the limit", w.length)
		}
		w.scan(append(chunk[:1+tail:1+tail], "\n{}\n"...))
		if !w.sawTooLong() {
			t.Fatalf("tail %d: a line of %d bytes not seen as too long", tail, maxLineBytes+tail)
		}
	}
}

// BenchmarkLineWatchScan: what watching the agent's stdout costs per flood-sized line (a 600-byte
// session/update), with the newline skip and with the byte-by-byte reference.
func BenchmarkLineWatchScan(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("f", 480) + `"}}}}` + "\n")
	chunk := []byte(strings.Repeat(string(line), 13)) // about one 8 KiB read of the SDK's scanner
	for _, bc := range []struct {
		name string
		scan func(*lineWatch, []byte)
	}{{"indexByte", (*lineWatch).scan}, {"byteByByte", (*lineWatch).scanByteByByte}} {
		b.Run(bc.name, func(b *testing.B) {
			w := &lineWatch{}
			b.SetBytes(int64(len(chunk)))
			for b.Loop() {
				bc.scan(w, chunk)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/13, "ns/line")
		})
	}
}
