// Package testnet holds network helpers for tests.
package testnet

import (
	"net"
	"sync/atomic"
)

// WriteCountingListener counts the write(2)s of every connection it accepts: tests of write coalescing
// read Writes before and after a burst of frames.
type WriteCountingListener struct {
	net.Listener
	Writes atomic.Int64
}

// Accept wraps the accepted connection so its writes are counted.
func (l *WriteCountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &writeCountingConn{Conn: c, writes: &l.Writes}, nil
}

type writeCountingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *writeCountingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}
