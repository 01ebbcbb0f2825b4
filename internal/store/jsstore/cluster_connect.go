package jsstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Remote is how mode c reaches an external NATS cluster (the --nats-* flags).
type Remote struct {
	URLs    []string // server URLs; the client fails over between them
	Creds   string   // a NATS credentials file (JWT and nkey seed); "" = none
	TLSCA   string   // a CA bundle for the servers' certificates; "" = the system roots
	TLSCert string   // a client certificate and its key, for servers that require one
	TLSKey  string
}

// connectTimeout bounds the first connection to the cluster.
const connectTimeout = 10 * time.Second

// Connect connects to an external NATS cluster with the store's client options (no reconnect buffer,
// reconnect forever) and opens the store on it, with opts.Replicas for the log stream and every bucket. The
// returned close closes the connection; stop every persister and the cluster first.
func Connect(ctx context.Context, r Remote, opts Options) (*Store, func(), error) {
	if len(r.URLs) == 0 {
		return nil, nil, errors.New("jsstore: no NATS server URL")
	}
	if (r.TLSCert == "") != (r.TLSKey == "") {
		return nil, nil, errors.New("jsstore: a TLS client certificate needs its key, and a key its certificate")
	}
	copts := append(ConnectOptions(), nats.Timeout(connectTimeout))
	if r.Creds != "" {
		copts = append(copts, nats.UserCredentials(r.Creds))
	}
	if r.TLSCA != "" {
		copts = append(copts, nats.RootCAs(r.TLSCA))
	}
	if r.TLSCert != "" {
		copts = append(copts, nats.ClientCert(r.TLSCert, r.TLSKey))
	}
	nc, err := nats.Connect(strings.Join(r.URLs, ","), copts...)
	if err != nil {
		return nil, nil, fmt.Errorf("jsstore: connect to %s: %w", strings.Join(r.URLs, ","), err)
	}
	st, err := Open(ctx, nc, opts)
	err = classifyReplicas(err)
	if err == nil && st.opts.Replicas > 1 {
		err = waitLeaders(ctx, st.js, st.opts.logStream(), "KV_"+st.opts.dirBucket())
	}
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return st, nc.Close, nil
}

// Conn is the store's connection: in mode c its status is the gateway's readiness.
func (s *Store) Conn() *nats.Conn { return s.nc }

// leaderPoll is how often waitLeaders asks for a replicated stream's leader.
const leaderPoll = 50 * time.Millisecond

// waitLeaders waits (bounded by ctx) until each replicated stream has a leader. CreateOrUpdate returns
// before a new R3 stream's Raft group has elected one; the first writes would otherwise fail or time out.
func waitLeaders(ctx context.Context, js jetstream.JetStream, streams ...string) error {
	for _, name := range streams {
		for {
			s, err := js.Stream(ctx, name)
			if err == nil {
				var info *jetstream.StreamInfo
				if info, err = s.Info(ctx); err == nil && (info.Cluster == nil || info.Cluster.Leader != "") {
					break
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("jsstore: stream %s has no leader: %w (last: %v)", name, ctx.Err(), err)
			case <-time.After(leaderPoll):
			}
		}
	}
	return nil
}
