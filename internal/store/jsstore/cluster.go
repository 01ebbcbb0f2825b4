package jsstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// Heartbeat timing (docs/cluster.md §5): a node's key lives NodeTTL after its last beat, and it beats every
// BeatInterval, so two beats may be lost before it expires.
const (
	NodeTTL      = store.NodeTTL
	BeatInterval = 2 * time.Second
)

// nodePattern is what a node id may be: one subject token and a KV key.
var nodePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Cluster errors.
var (
	ErrBadNodeID = fmt.Errorf("jsstore: node id must match %s", nodePattern)
	// ErrNodeIDInUse: another live process beats under this node id; it did not expire within one TTL.
	ErrNodeIDInUse = errors.New("jsstore: node id is held by another live gateway process")
	errClosed      = errors.New("jsstore: cluster closed")
)

// ClusterOptions describe this node.
type ClusterOptions struct {
	Node    string // required; [A-Za-z0-9_-]{1,64}
	URL     string // the advertised URL GET /v1/nodes shows
	Agents  []string
	Version string
	// StoreState is called at each beat for the node's write-behind health; nil reports "ok".
	StoreState func() store.StoreState
	// MaxConcurrentCommands bounds the commands Serve runs at once; default 256.
	MaxConcurrentCommands int
}

// Cluster is store.Cluster on the store's connection: the nodes bucket (heartbeats, a TTL per key with
// limit markers, so expiry is an event) and a core request/reply subject per node. Join claims the node id;
// Close leaves. Its goroutines (beat, watch, command handlers) are its own and Close waits for them.
type Cluster struct {
	st *Store             // Static after construction.
	kv jetstream.KeyValue // Static after construction; the nodes bucket.
	// large holds the commands and replies over the connection's max payload (command_large.go).
	large jetstream.ObjectStore // Static after construction.
	opts  ClusterOptions        // Static after construction.
	self  store.NodeInfo        // Static after construction; each beat adds the Store state of the moment.

	health beatHealth

	mu      sync.Mutex
	tracker *nodeTracker // Guarded by mu.
	rev     uint64       // Guarded by mu: the revision of this node's last successful beat.

	dispatchMu sync.Mutex // Held while an event is applied and delivered, and while a watcher registers.
	subsMu     sync.Mutex
	subs       map[int]func(store.NodeEvent) // Guarded by subsMu.
	nextSub    int                           // Guarded by subsMu.

	displaced     chan struct{} // Closed by the beat loop when another incarnation took the id.
	displacedOnce sync.Once

	cancel  context.CancelFunc // Ends the beat and watch loops and every Serve.
	ctx     context.Context    // Done on Close.
	wg      sync.WaitGroup     // The loops and Serve's handlers.
	sweeps  atomic.Uint64      // Sweeps the watch loop finished (tests wait on it).
	running atomic.Int64       // Command handlers running.
	// callRetries counts commands sent again to a live node whose subject had no listener (request).
	callRetries atomic.Uint64
	closeOnce   sync.Once
}

var _ store.Cluster = (*Cluster)(nil)

// Join opens the nodes bucket, claims opts.Node for a new incarnation and starts beating and watching. If
// the id is held, it waits up to one TTL (plus a beat) for the holder's key to expire, then gives up with
// ErrNodeIDInUse: two live processes never share a node id.
func (s *Store) Join(ctx context.Context, opts ClusterOptions) (*Cluster, error) {
	if !nodePattern.MatchString(opts.Node) {
		return nil, fmt.Errorf("%w: %q", ErrBadNodeID, opts.Node)
	}
	if opts.MaxConcurrentCommands <= 0 {
		opts.MaxConcurrentCommands = 256
	}
	kv, err := s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:         s.opts.nodesBucket(),
		History:        1,
		TTL:            NodeTTL,
		LimitMarkerTTL: NodeTTL,
		Storage:        jetstream.FileStorage,
		Replicas:       s.opts.Replicas,
	})
	if err == nil && s.opts.Replicas > 1 {
		err = waitLeaders(ctx, s.js, "KV_"+s.opts.nodesBucket())
	}
	if err != nil {
		return nil, fmt.Errorf("jsstore: bucket %s: %w", s.opts.nodesBucket(), err)
	}
	large, err := s.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: s.opts.largeBucket(), TTL: largeTTL, Storage: jetstream.FileStorage, Replicas: s.opts.Replicas,
	})
	if err == nil && s.opts.Replicas > 1 {
		err = waitLeaders(ctx, s.js, "OBJ_"+s.opts.largeBucket())
	}
	if err != nil {
		return nil, fmt.Errorf("jsstore: object store %s: %w", s.opts.largeBucket(), err)
	}
	c := &Cluster{
		st: s, kv: kv, large: large, opts: opts,
		self: store.NodeInfo{
			ID: opts.Node, Incarnation: uuid.NewString(), URL: opts.URL, Agents: opts.Agents,
			Version: opts.Version, StartedAt: time.Now().UTC(),
		},
		tracker:   newNodeTracker(opts.Node),
		subs:      map[int]func(store.NodeEvent){},
		displaced: make(chan struct{}),
	}
	rev, err := c.claim(ctx)
	if err != nil {
		return nil, err
	}
	c.rev = rev
	c.health.succeeded(time.Now())
	// The watch lives until Close: its context (which the client's subscription also waits on) ends there.
	c.ctx, c.cancel = context.WithCancel(context.Background())
	w, err := kv.WatchAll(c.ctx)
	if err != nil {
		c.cancel()
		_ = kv.Delete(ctx, opts.Node, jetstream.LastRevision(rev))
		return nil, fmt.Errorf("jsstore: nodes watch: %w", err)
	}
	c.wg.Add(2)
	go c.beatLoop()
	go c.watchLoop(w)
	return c, nil
}

// Self is this node's heartbeat value, without the store state each beat adds.
func (c *Cluster) Self() store.NodeInfo { return c.self }

// Displaced is closed when another incarnation took this node's id.
func (c *Cluster) Displaced() <-chan struct{} { return c.displaced }

// Close stops beating, deletes this node's key if it still holds it (the others see a clean leave), stops
// serving commands and waits for every goroutine of the cluster.
func (c *Cluster) Close() {
	c.closeOnce.Do(func() {
		c.cancel()
		c.wg.Wait()
		c.mu.Lock()
		rev := c.rev
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), BeatInterval)
		defer cancel()
		_ = c.kv.Delete(ctx, c.opts.Node, jetstream.LastRevision(rev))
	})
}

func (o Options) nodesBucket() string               { return o.Prefix + "-nodes" }
func (o Options) ticketsBucket() string             { return o.Prefix + "-tickets" }
func (o Options) largeBucket() string               { return o.Prefix + "-large" }
func (o Options) commandSubject(node string) string { return o.Prefix + ".cmd." + node }

// conn is the store's connection.
func (c *Cluster) conn() *nats.Conn { return c.st.nc }
