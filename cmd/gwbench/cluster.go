package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Mode c (docs/cluster.md §5): three gateways on a real 3-node nats-server cluster (built from the module),
// the session owned by the first and streamed from the second, whose follower cache is fed from the
// replicated log: what serving a session from another node costs.

// natsProcs is the nats-server cluster.
type natsProcs struct {
	urls  []string
	procs []*exec.Cmd
}

func (n *natsProcs) stop() {
	for _, p := range n.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
		_ = p.Wait()
	}
}

// startNATS builds nats-server into dir and starts a 3-server JetStream cluster on loopback.
func startNATS(ctx context.Context, dir string) (*natsProcs, error) {
	bin := filepath.Join(dir, "nats-server")
	fmt.Fprintln(os.Stderr, "gwbench: building nats-server")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go build nats-server: %w", err)
	}
	var client, routes []string
	for range 3 {
		c, err := freeAddr()
		if err != nil {
			return nil, err
		}
		r, err := freeAddr()
		if err != nil {
			return nil, err
		}
		client, routes = append(client, c), append(routes, "nats://"+r)
	}
	n := &natsProcs{}
	for i := range 3 {
		port := client[i][strings.LastIndexByte(client[i], ':')+1:]
		name := fmt.Sprintf("n%d", i+1)
		logf, err := os.Create(filepath.Join(dir, "nats-"+name+".log"))
		if err != nil {
			n.stop()
			return nil, err
		}
		cmd := exec.Command(bin, "-n", name, "-a", "127.0.0.1", "-p", port, "-js", "-sd", filepath.Join(dir, "nats-"+name),
			"--cluster_name", "gwbench", "-cluster", routes[i], "-routes", strings.Join(routes, ","))
		cmd.Stdout, cmd.Stderr = logf, logf
		err = cmd.Start()
		logf.Close()
		if err != nil {
			n.stop()
			return nil, err
		}
		n.procs = append(n.procs, cmd)
		n.urls = append(n.urls, "nats://"+client[i])
	}
	for _, u := range n.urls {
		if err := waitJetStream(ctx, u); err != nil {
			n.stop()
			return nil, err
		}
	}
	return n, nil
}

// waitJetStream waits (at most a minute) until the server at url answers JetStream requests.
func waitJetStream(ctx context.Context, url string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if nc, err := nats.Connect(url, nats.Timeout(time.Second)); err == nil {
			js, err := jetstream.New(nc)
			if err == nil {
				actx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err = js.AccountInfo(actx)
				cancel()
			}
			nc.Close()
			if err == nil {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("nats-server " + url + " did not answer JetStream requests")
}

// clusterBench is the three gateways of the cluster row.
type clusterBench struct {
	nats  *natsProcs
	nodes []*gatewayProc
}

func (c *clusterBench) stop() {
	for _, g := range c.nodes {
		g.stop()
	}
	c.nats.stop()
}

// startClusterBench starts the NATS cluster and gateways a, b and c, and waits until b lists all three.
func startClusterBench(ctx context.Context, bin, dir string, extra []string) (*clusterBench, error) {
	n, err := startNATS(ctx, dir)
	if err != nil {
		return nil, err
	}
	c := &clusterBench{nats: n}
	for i, id := range []string{"a", "b", "c"} {
		flags := append(append([]string(nil), extra...), "--nats-url", n.urls[i], "--node-id", id, "--nats-replicas", "3")
		g, err := startGateway(bin, dir, "gateway-node-"+id, false, flags...)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.nodes = append(c.nodes, g)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res struct {
			Nodes []struct{} `json:"nodes"`
		}
		if code, err := c.nodes[1].do(ctx, "GET", "/v1/nodes", nil, &res); err == nil && code == 200 && len(res.Nodes) == 3 {
			return c, nil
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, errors.New("the cluster's gateways did not see each other")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runNonOwner floods a session node a owns to k session-WebSocket clients on node b, prompted through b.
func runNonOwner(ctx context.Context, c *clusterBench, k int, prompt string, n, size int) (flood, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	owner, other := c.nodes[0], c.nodes[1]
	id, err := owner.createSession(ctx, "flood")
	if err != nil {
		return flood{}, err
	}
	defer owner.do(context.Background(), "DELETE", "/v1/sessions/"+id, nil, nil)
	cls := make([]floodClient, 0, k)
	for range k {
		cl, err := other.openFace(ctx, faceWS, id)
		if err != nil {
			for _, c := range cls {
				c.face.close()
			}
			return flood{}, err
		}
		cls = append(cls, cl)
	}
	restPrompt := func(ctx context.Context) error {
		_, err := other.do(ctx, "POST", "/v1/sessions/"+id+"/prompt", map[string]string{"text": prompt}, nil)
		return err
	}
	return measureFlood(ctx, "gateway ws via non-owner", other, cls, n, size, restPrompt)
}

// clusterRow names the non-owner row.
const clusterRow = "gateway ws x1 via non-owner (3 nodes)"
