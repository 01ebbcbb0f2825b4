package jsstore

import (
	"fmt"
	"regexp"
)

// Options configure a Store. Zero values take the defaults of docs/cluster.md.
type Options struct {
	Prefix       string // names every stream, bucket and subject; [a-z0-9-]{1,32}; default "acpgw"
	Replicas     int    // stream and bucket replicas; default 1
	LogMaxFrames int    // messages kept per session subject (MaxMsgsPerSubject); 0 = unlimited
	LogMaxBytes  int64  // bytes kept per session subject, enforced by the writer's purges; 0 = unlimited
	Inflight     int    // unacknowledged publishes per session; default 256
	MaxLag       int64  // bytes an unacknowledged tail may pin in a session's ring; default 16 MiB
	// Fence makes each publish of a session's writer expect the subject's last stream sequence, so a writer
	// stops once another node appended to the log (a takeover): for many nodes on one store. One publish is in
	// flight per session, an atomic batch of what the ring holds. false: nothing else writes the store (one
	// process).
	Fence bool
}

var prefixPattern = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

func (o Options) withDefaults() (Options, error) {
	if o.Prefix == "" {
		o.Prefix = "acpgw"
	}
	if !prefixPattern.MatchString(o.Prefix) {
		return o, fmt.Errorf("jsstore: prefix %q must match %s", o.Prefix, prefixPattern)
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.Inflight <= 0 {
		o.Inflight = 256
	}
	if o.MaxLag <= 0 {
		o.MaxLag = 16 << 20
	}
	return o, nil
}

func (o Options) logStream() string            { return o.Prefix + "-log" }
func (o Options) logSubject(sid string) string { return o.Prefix + ".log." + sid }
func (o Options) dirBucket() string            { return o.Prefix + "-sessions" }
