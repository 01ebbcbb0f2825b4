package jsstore

import (
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/store/blockcheck"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ServerOptions is the one configuration of the in-process JetStream server (mode b, and the tests' embedded
// server): file storage in dir/jetstream (the server adds "jetstream"), no listener, no signal handlers.
//
// SyncAlways stays off: with one replica the file store writes each message to its block file (write(2), no
// fsync) before the stream acknowledges it, so an acknowledged frame survives kill -9 of the process; only a
// power loss can take what the OS had not yet flushed (fsync every SyncInterval, 2 min). docs/cluster.md §3.
func ServerOptions(dir string) *server.Options {
	return &server.Options{
		ServerName: "acpgw-embedded",
		JetStream:  true,
		StoreDir:   dir,
		DontListen: true,
		NoSigs:     true,
		NoLog:      true,
	}
}

// startTimeout bounds the embedded server's start (JetStream recovers its store before it is ready).
const startTimeout = time.Minute

// StartServer starts an in-process server with opts and waits until it accepts connections.
func StartServer(opts *server.Options) (*server.Server, error) {
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("jsstore: embedded server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(startTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("jsstore: embedded server not ready after %s", startTimeout)
	}
	return srv, nil
}

// ConnectOptions are the client options of every store connection: while disconnected, publishes fail at once
// (no reconnect buffer: the writer backs off and the ring holds the tail), and reconnects never give up.
func ConnectOptions() []nats.Option {
	return []nats.Option{nats.ReconnectBufSize(-1), nats.MaxReconnects(-1), nats.Name("acp-gateway")}
}

// Embedded starts mode b's store: an in-process JetStream server on dir/jetstream and a connection to it. The
// store's blocks are checked first and damaged ones cut (blockcheck.Repair); the returned damage says what was cut,
// for the operator. The returned shutdown closes the connection and stops the server.
func Embedded(dir string) (*nats.Conn, func(), []blockcheck.Damage, error) {
	damage, err := blockcheck.Repair(dir)
	if err != nil {
		return nil, nil, damage, err
	}
	srv, err := StartServer(ServerOptions(dir))
	if err != nil {
		return nil, nil, damage, err
	}
	nc, err := nats.Connect("", append(ConnectOptions(), nats.InProcessServer(srv))...)
	if err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, nil, damage, fmt.Errorf("jsstore: connect to the embedded server: %w", err)
	}
	return nc, func() {
		nc.Close()
		srv.Shutdown()
		srv.WaitForShutdown()
	}, damage, nil
}
