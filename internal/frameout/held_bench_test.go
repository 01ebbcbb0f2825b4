package frameout

import (
	"net"
	"strings"
	"testing"
)

// discardConn takes every write.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkHeldConnWrite is a face's frame (600 bytes) through a HeldConn that holds, flushed every 50
// frames as a writer behind a flood does: what a frame costs the batching layer.
func BenchmarkHeldConnWrite(b *testing.B) {
	c := &HeldConn{Conn: discardConn{}}
	frame := append([]byte{0x81, 126, 0x02, 0x54}, strings.Repeat("x", 596)...) // a text frame of 596 bytes
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%50 == 0 {
			if err := c.Flush(); err != nil {
				b.Fatal(err)
			}
			c.Hold()
		}
		if _, err := c.Write(frame); err != nil {
			b.Fatal(err)
		}
	}
}
