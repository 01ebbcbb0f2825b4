// Package natstest runs the embedded JetStream server of mode b inside a test: the same in-process server
// (jsstore.ServerOptions), on a temporary store directory, stopped and restartable by the test.
package natstest

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/acp-gateway/gateway/internal/store/blockcheck"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

// Server is an embedded JetStream server. Connections made by Connect dial whichever server instance is
// current, so they reconnect across Restart like clients of a real server that came back.
type Server struct {
	t   testing.TB
	dir string // Static after construction.

	mu  sync.Mutex
	srv *server.Server // Guarded by mu; nil while stopped.
}

// Embedded starts a server on t.TempDir() and stops it, and every connection it made, when the test ends.
func Embedded(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, dir: t.TempDir()}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Dir is the server's store directory.
func (s *Server) Dir() string { return s.dir }

// Start starts the server on its store directory (again, after Stop).
//
// On a restart every block the server wrote must pass the start-up check of mode b (blockcheck.Repair): a
// block it would cut is a false alarm, and fails the test.
func (s *Server) Start() {
	s.t.Helper()
	if damage, err := blockcheck.Repair(s.dir); err != nil || len(damage) > 0 {
		s.t.Errorf("natstest: the store's own blocks fail the start-up check: %v %v", damage, err)
	}
	srv, err := jsstore.StartServer(jsstore.ServerOptions(s.dir))
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
}

// Stop shuts the server down and waits until it is gone; clients start reconnecting.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// Restart stops the server and starts a new one on the same store directory.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.Start()
}

var errStopped = errors.New("natstest: server stopped")

// InProcessConn implements nats.InProcessConnProvider for the current server.
func (s *Server) InProcessConn() (net.Conn, error) {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil, errStopped
	}
	return srv.InProcessConn()
}

// Connect returns a connection with the store's client options that reconnects quickly; it is closed when
// the test ends (before the server stops).
func (s *Server) Connect(opts ...nats.Option) *nats.Conn {
	s.t.Helper()
	all := append(jsstore.ConnectOptions(), nats.InProcessServer(s), nats.ReconnectWait(10*time.Millisecond),
		nats.ReconnectJitter(0, 0))
	nc, err := nats.Connect("", append(all, opts...)...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(nc.Close)
	return nc
}
