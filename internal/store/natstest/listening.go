package natstest

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

// Listening is a JetStream server on a free loopback port, for tests of gateways that connect by URL
// (--nats-url), as they would to an external cluster.
type Listening struct {
	srv *server.Server // Static after construction.
}

// Listen starts a listening server on t.TempDir() and stops it when the test ends.
func Listen(t testing.TB) *Listening {
	t.Helper()
	opts := jsstore.ServerOptions(t.TempDir())
	opts.ServerName = "acpgw-test"
	opts.DontListen = false
	opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	srv, err := jsstore.StartServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	l := &Listening{srv: srv}
	t.Cleanup(l.Stop)
	return l
}

// URL is the server's client URL (nats://127.0.0.1:port).
func (l *Listening) URL() string { return l.srv.ClientURL() }

// Stop shuts the server down and waits until it is gone; clients start reconnecting (to nothing).
func (l *Listening) Stop() {
	l.srv.Shutdown()
	l.srv.WaitForShutdown()
}
