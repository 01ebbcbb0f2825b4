package agentsvc

import (
	"bufio"
	"errors"
	"io"
	"unicode/utf8"
)

// Bounds of what fs/read_text_file reads. The answer must fit on one JSON-RPC line the agent's SDK accepts
// (acp-go-sdk allows 10 MiB): at most maxFSRead bytes, and at most maxFSWire once encoded as a JSON string
// (a control character or '<' takes six bytes there). A line/limit read looks through at most maxFSScan
// bytes of the file, so a selection far into a huge (or sparse) file costs bounded time, and only a small
// buffer besides the selection itself.
const (
	maxFSRead   = 4 << 20
	maxFSWire   = 8 << 20
	maxFSScan   = 64 << 20
	fsReadChunk = 64 << 10
)

// readBounds are the bounds of one read: the most bytes returned, the most looked at by a line/limit read,
// and the read buffer's size (at least 16).
type readBounds struct {
	out  int
	scan int64
	buf  int
}

var fsBounds = readBounds{out: maxFSRead, scan: maxFSScan, buf: fsReadChunk}

// The ways a read exceeds its bounds.
var (
	errFileTooLarge      = errors.New("file is larger than the read bound")
	errSelectionTooLarge = errors.New("selection is larger than the read bound")
	errScanBound         = errors.New("selection does not end within the scan bound")
	errWireTooLarge      = errors.New("selection is larger than the wire bound once encoded")
)

// readSelection reads the lines [line, line+limit) of r (1-based; nil line = 1, nil limit = to the end;
// line >= 1 and limit >= 0, the caller checks) and stops reading once they are complete. Lines past the end
// are empty. Without line and limit it reads the whole of r. It reads in b.buf pieces and keeps only the
// selection: a selection that would be longer than b.out bytes is errSelectionTooLarge (the whole of r
// errFileTooLarge), one that needs bytes past the first b.scan of r errScanBound.
func readSelection(r io.Reader, line, limit *int, b readBounds) ([]byte, error) {
	if line == nil && limit == nil {
		data, err := io.ReadAll(io.LimitReader(r, int64(b.out)+1))
		if err == nil && len(data) > b.out {
			err = errFileTooLarge
		}
		return data, err
	}
	br := bufio.NewReaderSize(&scanReader{r: r, left: b.scan}, b.buf)
	if line != nil {
		for n := 1; n < *line; n++ {
			if err := skipLine(br); err == io.EOF {
				return nil, nil
			} else if err != nil {
				return nil, err
			}
		}
	}
	var out []byte
	for n := 0; limit == nil || n < *limit; n++ {
		var err error
		if out, err = appendLine(out, br, b.out); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendLine appends the next line of br, '\n' included, to out; io.EOF when br ended instead (what there
// was of the line is appended), errSelectionTooLarge when out would grow past most bytes.
func appendLine(out []byte, br *bufio.Reader, most int) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		need := len(out) + len(chunk)
		if need > most {
			return nil, errSelectionTooLarge
		}
		if need > cap(out) {
			// Doubling, never past most: append's own growth (a quarter at a time for large slices)
			// allocates about five times what it ends with.
			grown := make([]byte, len(out), min(max(2*cap(out), need, 4<<10), most))
			copy(grown, out)
			out = grown
		}
		out = append(out, chunk...)
		if err != bufio.ErrBufferFull {
			return out, err
		}
	}
}

// skipLine reads past the next '\n'; io.EOF when r ends first.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

// scanReader reads the first left bytes of r; past them it reports errScanBound, or io.EOF when r ends
// exactly there.
type scanReader struct {
	r    io.Reader
	left int64
}

func (s *scanReader) Read(p []byte) (int, error) {
	if s.left <= 0 {
		var one [1]byte
		if n, err := io.ReadFull(s.r, one[:]); n == 0 {
			return 0, err // io.EOF: r ends right at the bound
		}
		return 0, errScanBound
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	return n, err
}

// jsonStringLen is at least the length of b encoded as a JSON string by encoding/json, as the SDK sends it:
// quotes, two bytes for the short escapes, six for other control characters, '<', '>', '&', U+2028, U+2029
// and each byte that is not UTF-8 (U+FFFD).
func jsonStringLen(b []byte) int {
	n := 2
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}
