package frameout

import "encoding/binary"

// frameScan follows the WebSocket frames in the bytes a HeldConn is given, across writes, to tell which
// bytes belong to a control frame (close, ping, pong). The frames are a server's: unmasked, but a mask key
// is skipped if one is there.
type frameScan struct {
	left    uint64   // payload bytes of the current frame still to come
	control bool     // the current frame is a control frame
	hdr     [14]byte // a header split across writes, as read so far
	n       int      // bytes in hdr
}

// scan reads p and reports whether any of its bytes belongs to a control frame.
func (s *frameScan) scan(p []byte) bool {
	found := false
	for len(p) > 0 {
		if s.left > 0 {
			k := min(s.left, uint64(len(p)))
			found = found || s.control
			s.left -= k
			p = p[k:]
			continue
		}
		if s.n == 0 {
			if size, length, ok := frameHeader(p); ok { // the whole header in p: the usual case
				s.control = p[0]&0x08 != 0 // opcodes 0x8-0xF
				found = found || s.control
				s.left = length
				p = p[size:]
				continue
			}
		}
		s.hdr[s.n] = p[0] // a header split across writes (a full bufio buffer): gathered byte by byte
		s.n++
		p = p[1:]
		s.control = s.hdr[0]&0x08 != 0
		found = found || s.control
		if _, length, ok := frameHeader(s.hdr[:s.n]); ok {
			s.left, s.n = length, 0
		}
	}
	return found
}

// frameHeader reads the frame header at the start of h: its size and the payload's length; ok is false
// while h holds less than the whole header.
func frameHeader(h []byte) (size int, length uint64, ok bool) {
	if len(h) < 2 {
		return 0, 0, false
	}
	size, length = 2, uint64(h[1]&0x7f)
	switch length {
	case 126:
		size += 2
	case 127:
		size += 8
	}
	if h[1]&0x80 != 0 {
		size += 4 // a mask key
	}
	if len(h) < size {
		return size, 0, false
	}
	switch length {
	case 126:
		length = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		length = binary.BigEndian.Uint64(h[2:10])
	}
	return size, length, true
}
