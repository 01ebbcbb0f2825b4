package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

// Mode c (docs/cluster.md §5): --nats-url makes this gateway one node of many sharing an external NATS
// JetStream cluster: the same store as mode b, plus the nodes bucket (heartbeats) and routed commands.

// nodeIDPattern is jsstore's: one subject token and a KV key.
var nodeIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// checkCluster checks the mode c flags and fills the defaults that depend on the host.
func (c *config) checkCluster() error {
	if c.natsURL == "" {
		for _, f := range []struct{ name, value string }{{"nats-creds", c.natsCreds}, {"nats-tls-ca", c.natsTLSCA},
			{"nats-tls-cert", c.natsTLSCert}, {"nats-tls-key", c.natsTLSKey}, {"node-id", c.nodeID}, {"advertise-url", c.advertiseURL}} {
			if f.value != "" {
				return fmt.Errorf("--%s needs --nats-url", f.name)
			}
		}
		return nil
	}
	if c.dataDir != "" {
		return errors.New("--data-dir and --nats-url are mutually exclusive: --data-dir keeps sessions in an embedded store on this host, --nats-url in a NATS cluster shared by many gateways; choose one")
	}
	if len(c.natsURLs()) == 0 {
		return fmt.Errorf("--nats-url %q names no server", c.natsURL)
	}
	if c.natsReplicas < 1 {
		return fmt.Errorf("--nats-replicas must be at least 1, got %d", c.natsReplicas)
	}
	if (c.natsTLSCert == "") != (c.natsTLSKey == "") {
		return errors.New("--nats-tls-cert and --nats-tls-key go together: a client certificate needs its key")
	}
	if c.nodeID == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("--node-id: no hostname to default to (%v); set one", err)
		}
		c.nodeID = sanitizeNodeID(host)
	} else if !nodeIDPattern.MatchString(c.nodeID) {
		return fmt.Errorf("--node-id %q: want 1 to 64 letters, digits, _ or - (it names a NATS subject and key)", c.nodeID)
	}
	if c.advertiseURL != "" {
		u, err := url.Parse(c.advertiseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--advertise-url %q: want an absolute http or https URL like http://gw-a:8080", c.advertiseURL)
		}
	}
	return nil
}

// natsURLs splits --nats-url.
func (c *config) natsURLs() []string { return splitList(c.natsURL) }

// sanitizeNodeID makes a hostname a node id: other characters become -, and it is cut at 64.
func sanitizeNodeID(host string) string {
	id := []byte(host)
	for i, b := range id {
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-') {
			id[i] = '-'
		}
	}
	if len(id) > 64 {
		id = id[:64]
	}
	if len(id) == 0 {
		return "gateway"
	}
	return string(id)
}

// clusterStore is mode c's open store and this node's membership.
type clusterStore struct {
	store   *jsstore.Store
	cluster *jsstore.Cluster
	conn    *nats.Conn
	tickets clusterTickets
	close   func() // closes the connection
}

// joinCluster connects to the NATS cluster, opens the store and joins the nodes as cfg.nodeID, all within
// ctx. state is called at each beat: the registry that reports it is built after the join (it needs the
// cluster in its Config), so the caller passes a closure over it.
func (c *config) joinCluster(ctx context.Context, logger *slog.Logger, advertise string, agentNames []string, state func() store.StoreState) (*clusterStore, error) {
	urls := c.natsURLs()
	st, closeConn, err := jsstore.Connect(ctx, jsstore.Remote{
		URLs: urls, Creds: c.natsCreds, TLSCA: c.natsTLSCA, TLSCert: c.natsTLSCert, TLSKey: c.natsTLSKey,
	}, jsstore.Options{
		Prefix: c.natsPrefix, Replicas: c.natsReplicas, LogMaxFrames: c.logMaxFrames, LogMaxBytes: c.logMaxBytes,
		Inflight: c.storeInflight, MaxLag: c.storeMaxLag, Fence: true,
	})
	if rerr := replicasError(c, err); rerr != nil {
		return nil, joinConfigError{rerr}
	}
	if err != nil {
		return nil, fmt.Errorf("--nats-url: %w", err)
	}
	tk, err := st.Tickets(ctx)
	if err != nil {
		closeConn()
		return nil, fmt.Errorf("--nats-url: %w", err)
	}
	cl, err := st.Join(ctx, jsstore.ClusterOptions{Node: c.nodeID, URL: advertise, Agents: agentNames, Version: version, StoreState: state})
	if errors.Is(err, jsstore.ErrNodeIDInUse) {
		closeConn()
		return nil, joinConfigError{fmt.Errorf("--node-id %s is in use by another live gateway (its heartbeat did not expire within %s); give each node its own id", c.nodeID, jsstore.NodeTTL)}
	}
	if err != nil {
		closeConn()
		return nil, fmt.Errorf("--nats-url: join as node %s: %w", c.nodeID, err)
	}
	logger.Info("cluster node", "node", c.nodeID, "url", advertise, "nats", strings.Join(urls, ","), "prefix", c.natsPrefix, "replicas", c.natsReplicas)
	return &clusterStore{store: st, cluster: cl, conn: st.Conn(), tickets: clusterTickets{tk}, close: closeConn}, nil
}

// leave ends this node's membership, then the connection: after the registry's shutdown flushed every
// session, so nothing is left to publish.
func (cs *clusterStore) leave() {
	cs.cluster.Close()
	cs.close()
}
