package agentsvc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// selectRef is what readSelection must answer, worked out on the whole of data: the lines [line, line+limit)
// as the gateway selected them before it streamed (selectLines, kept below), and which bound a streaming
// read meets first. A byte at index i can be read when i < b.scan; a selection that runs to the end of data
// needs the end seen too (len(data) <= b.scan).
func selectRef(data []byte, line, limit *int, b readBounds) ([]byte, error) {
	if line == nil && limit == nil {
		if len(data) > b.out {
			return nil, errFileTooLarge
		}
		return data, nil
	}
	start, pos := 1, 0
	if line != nil {
		start = *line
	}
	for n := 1; n < start; n++ {
		j := bytes.IndexByte(data[pos:], '\n')
		if j < 0 || pos+j >= int(b.scan) {
			if j < 0 && len(data) <= int(b.scan) {
				return nil, nil
			}
			return nil, errScanBound
		}
		pos += j + 1
	}
	end, atEOF := pos, false
	for n := 0; limit == nil || n < *limit; n++ {
		j := bytes.IndexByte(data[end:], '\n')
		if j < 0 {
			end, atEOF = len(data), true
			break
		}
		end += j + 1
	}
	within := atEOF && len(data) <= int(b.scan) || !atEOF && end <= int(b.scan)
	if got := min(end, int(b.scan)) - pos; !within && got > b.out || within && end-pos > b.out {
		return nil, errSelectionTooLarge
	}
	if !within {
		return nil, errScanBound
	}
	sel, _ := selectLines(data, line, limit)
	return sel, nil
}

// selectLines is the in-memory selection the gateway made before reads were streamed: limit lines starting
// at line (1-based); nil line/limit mean from the start / to the end.
func selectLines(data []byte, line, limit *int) ([]byte, bool) {
	if line == nil && limit == nil {
		return data, true
	}
	start := 1
	if line != nil {
		start = *line
	}
	if start < 1 || limit != nil && *limit < 0 {
		return nil, false
	}
	for i := 1; i < start; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return nil, true
		}
		data = data[j+1:]
	}
	if limit == nil {
		return data, true
	}
	end := 0
	for n := 0; n < *limit && end < len(data); n++ {
		j := bytes.IndexByte(data[end:], '\n')
		if j < 0 {
			end = len(data)
			break
		}
		end += j + 1
	}
	return data[:end], true
}

// checkSelection compares readSelection on data, read one byte at a time and in one piece, with selectRef.
func checkSelection(t *testing.T, data []byte, line, limit *int, b readBounds) {
	t.Helper()
	want, wantErr := selectRef(data, line, limit, b)
	for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
		got, err := readSelection(r, line, limit, b)
		if !errors.Is(err, wantErr) || err == nil && !bytes.Equal(got, want) {
			t.Fatalf("readSelection(%q, line %v, limit %v, %+v) = %q, %v; want %q, %v", data, deref(line), deref(limit), b, got, err, want, wantErr)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestReadSelection(t *testing.T) {
	b := readBounds{out: 8, scan: 20, buf: 16}
	one, two, three := intp(1), intp(2), intp(3)
	for _, c := range []struct {
		data        string
		line, limit *int
	}{
		{"a\nb\nc\n", nil, nil},
		{"a\nb\nc", two, one},
		{"a\nb\nc", two, nil},
		{"a\nb\nc", three, intp(5)},
		{"a\nb\nc", intp(9), one},
		{"a\nb\nc", one, intp(0)},
		{"0123456789\n", nil, nil},                    // whole file over out
		{"0123456789\nx", two, one},                   // first line is skipped whatever its length
		{"a\n0123456789\n", two, one},                 // selection over out
		{"a\n012345\n" + "xxxxxxxxxxxxxxx", two, one}, // selection ends inside scan; the rest is never read
		{"aaaaaaaaaaaaaaaaaaaaaaaaa\nb\n", two, one},  // line 2 starts past scan
		{"aaaaaaaaaaaaaaaaaaa\nb\n", two, one},        // the newline is the last byte within scan, b is not
		{"aaaaaaaaaaaaaaaaaaaa", two, one},            // runs to the end exactly at scan
		{"aaaaaaaaaaaaaaaaaaaaa", two, one},           // one byte past it
	} {
		checkSelection(t, []byte(c.data), c.line, c.limit, b)
	}
}

// FuzzReadSelection: the streamed selection equals the in-memory one within the bounds, and meets the bound
// selectRef says it meets, whatever the buffer size and however the reader splits its reads.
func FuzzReadSelection(f *testing.F) {
	f.Add([]byte("one\ntwo\nthree\n"), 2, 1, 16, 64, 8)
	f.Add([]byte("\n\n\n\n\n"), 3, -1, 16, 3, 8)
	f.Add([]byte("long line without a newline at all"), 1, 1, 16, 40, 8)
	f.Add([]byte("x\n"), 0, 0, 16, 2, 2)
	f.Fuzz(func(t *testing.T, data []byte, line, limit, buf, scan, out int) {
		var lp, mp *int
		if line > 0 {
			lp = &line
		}
		if limit >= 0 && line != 0 {
			mp = &limit
		}
		b := readBounds{out: out&0xff + 1, scan: int64(scan & 0xff), buf: buf&0x3f + 16}
		checkSelection(t, data, lp, mp, b)
	})
}

// FuzzJSONStringLen: jsonStringLen is the length encoding/json gives the string, except for \b and \f, which
// it counts as six bytes where the encoder writes two (it may only overestimate).
func FuzzJSONStringLen(f *testing.F) {
	f.Add([]byte("plain <a href=\"x\">&amp;</a>\n\t\x00\x1f"))
	f.Add([]byte("\xff\xfe \u2028\u2029 é 😀 \b\f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		enc, err := json.Marshal(string(b))
		if err != nil {
			t.Fatal(err)
		}
		short := bytes.Count(b, []byte("\b")) + bytes.Count(b, []byte("\f"))
		if got := jsonStringLen(b); got != len(enc)+4*short {
			t.Fatalf("jsonStringLen(%q) = %d; encoded %d bytes with %d \\b or \\f", b, got, len(enc), short)
		}
	})
}

func intp(n int) *int { return &n }
