package agentsvc

import (
	"strings"
	"unicode/utf8"
)

// terminalOutput is what a terminal keeps of its command's output: valid UTF-8 text, at most limit bytes, cut
// from the start at a character boundary once it grows past the limit (ACP's outputByteLimit rule).
type terminalOutput struct {
	limit     int
	buf       []byte // valid UTF-8; what is kept is buf[start:]
	start     int    // where the kept text begins: dropping the start moves it, compaction is amortised
	truncated bool   // bytes were dropped from the start
	pending   []byte // an incomplete UTF-8 sequence at the end of the last read, completed by the next
}

// text is the output kept: valid UTF-8, at most limit bytes.
func (o *terminalOutput) text() []byte { return o.buf[o.start:] }

// add takes raw bytes from the command and returns them as text (what clients are sent); invalid sequences
// become U+FFFD, a sequence split between two reads is kept until it is complete.
func (o *terminalOutput) add(p []byte) string {
	data := append(o.pending, p...)
	o.pending = nil
	if cut := incompleteTail(data); cut < len(data) {
		o.pending = append([]byte(nil), data[cut:]...)
		data = data[:cut]
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	o.keep(text)
	return text
}

// flush ends the output: an incomplete sequence left at the end becomes U+FFFD.
func (o *terminalOutput) flush() string {
	if len(o.pending) == 0 {
		return ""
	}
	o.pending = nil
	o.keep("\uFFFD")
	return "\uFFFD"
}

func (o *terminalOutput) keep(text string) {
	o.buf = append(o.buf, text...)
	if len(o.buf)-o.start <= o.limit {
		return
	}
	cut := len(o.buf) - o.limit
	for cut < len(o.buf) && !utf8.RuneStart(o.buf[cut]) {
		cut++
	}
	o.start, o.truncated = cut, true
	if o.start > o.limit { // the dropped bytes outweigh the kept ones: move the kept ones down once
		n := copy(o.buf, o.buf[o.start:])
		o.buf, o.start = o.buf[:n], 0
	}
}

// incompleteTail returns where a trailing, still incomplete UTF-8 sequence begins (len(b) when there is none).
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// textChunks splits text at character boundaries into pieces of at most max bytes (max >= utf8.UTFMax).
func textChunks(text string, max int) []string {
	var out []string
	for len(text) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}
