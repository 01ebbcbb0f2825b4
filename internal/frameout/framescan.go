package frameout

import "encoding/binary"

// frameScan follows the WebSocket frames in the bytes a HeldConn is given, across writes, to tell which
// bytes belong to a control frame (close, ping, pong). The frames are a server's: unmasked, but a mask key
// is skipped if one is there.
type frameScan struct {
	left    uint64   // payload bytes of the current frame still to come
	control bool     // the current frame is a control frame
	hdr     [14]byte // the header read so far
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
		s.hdr[s.n] = p[0]
		s.n++
		p = p[1:]
		s.control = s.hdr[0]&0x08 != 0 // opcodes 0x8-0xF
		found = found || s.control
		if s.n < 2 {
			continue
		}
		size, length := 2, uint64(s.hdr[1]&0x7f)
		switch length {
		case 126:
			size += 2
		case 127:
			size += 8
		}
		if s.hdr[1]&0x80 != 0 {
			size += 4
		}
		if s.n < size {
			continue
		}
		switch length {
		case 126:
			length = uint64(binary.BigEndian.Uint16(s.hdr[2:4]))
		case 127:
			length = binary.BigEndian.Uint64(s.hdr[2:10])
		}
		s.left, s.n = length, 0
	}
	return found
}
