package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/store"
)

// watchLoop feeds the tracker from the nodes bucket's watch and, every BeatInterval, sweeps: it checks the
// keys of nodes that went silent (in case a marker was missed) and declares the held losses once the loss
// guard opens. It owns w.
func (c *Cluster) watchLoop(w jetstream.KeyWatcher) {
	defer c.wg.Done()
	defer func() { _ = w.Stop() }()
	sweep := time.NewTicker(BeatInterval)
	defer sweep.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case kve, ok := <-w.Updates():
			if !ok {
				return
			}
			if kve != nil {
				c.apply(kve)
			}
		case <-sweep.C:
			c.sweep()
		}
	}
}

// apply records one change of the bucket and delivers its events.
func (c *Cluster) apply(kve jetstream.KeyValueEntry) {
	c.dispatchMu.Lock()
	defer c.dispatchMu.Unlock()
	now := time.Now()
	c.mu.Lock()
	var evs []store.NodeEvent
	switch kve.Operation() {
	case jetstream.KeyValuePut:
		var info store.NodeInfo
		if json.Unmarshal(kve.Value(), &info) == nil && info.ID == kve.Key() && info.Incarnation != "" {
			evs = c.tracker.put(info, kve.Revision(), now)
		}
	case jetstream.KeyValueDelete:
		c.tracker.gone(kve.Key(), store.LossDeleted)
	case jetstream.KeyValuePurge: // the limit marker of an expired key (this code never purges node keys)
		c.tracker.gone(kve.Key(), store.LossExpired)
	}
	evs = append(evs, c.tracker.declare(c.health.mayDeclareLoss(now))...)
	c.mu.Unlock()
	c.deliver(evs)
}

// sweep reads the keys toCheck lists: gone means expired (its marker was missed), a newer value is a beat
// the watch has not delivered yet. Then it declares the held losses if the guard is open. It does not rely on
// the watch, which may lag after a reconnect.
func (c *Cluster) sweep() {
	defer c.sweeps.Add(1)
	c.mu.Lock()
	check := c.tracker.toCheck(time.Now())
	c.mu.Unlock()
	type found struct {
		kve  jetstream.KeyValueEntry
		gone bool
	}
	checked := map[string]found{}
	for id := range check {
		ctx, cancel := context.WithTimeout(c.ctx, BeatInterval)
		kve, err := leaderGet(ctx, c.conn(), c.st.opts.nodesBucket(), id) // a replica behind would revive it
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
			checked[id] = found{gone: true}
		case err == nil:
			checked[id] = found{kve: kve}
		}
	}
	c.dispatchMu.Lock()
	defer c.dispatchMu.Unlock()
	now := time.Now()
	c.mu.Lock()
	var evs []store.NodeEvent
	for id, f := range checked {
		if f.gone {
			if n, ok := c.tracker.live[id]; ok && check[id] != 0 && n.rev == check[id] {
				c.tracker.gone(id, store.LossExpired)
			}
			continue
		}
		var info store.NodeInfo
		if json.Unmarshal(f.kve.Value(), &info) == nil && info.ID == id && info.Incarnation != "" {
			evs = append(evs, c.tracker.put(info, f.kve.Revision(), now)...)
		}
	}
	evs = append(evs, c.tracker.declare(c.health.mayDeclareLoss(now))...)
	c.mu.Unlock()
	c.deliver(evs)
}

// deliver calls every watcher with evs, in order. The caller holds dispatchMu.
func (c *Cluster) deliver(evs []store.NodeEvent) {
	if len(evs) == 0 {
		return
	}
	c.subsMu.Lock()
	fns := make([]func(store.NodeEvent), 0, len(c.subs))
	for _, fn := range c.subs {
		fns = append(fns, fn)
	}
	c.subsMu.Unlock()
	for _, ev := range evs {
		for _, fn := range fns {
			fn(ev)
		}
	}
}

// Nodes lists the live nodes, sorted by id.
func (c *Cluster) Nodes() []store.NodeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tracker.nodes()
}

// WatchNodes calls fn with NodeJoined for every live node, then with every event, until stop.
func (c *Cluster) WatchNodes(fn func(store.NodeEvent)) (stop func()) {
	c.dispatchMu.Lock()
	defer c.dispatchMu.Unlock()
	for _, n := range c.Nodes() {
		fn(store.NodeEvent{Kind: store.NodeJoined, Node: n})
	}
	c.subsMu.Lock()
	id := c.nextSub
	c.nextSub++
	c.subs[id] = fn
	c.subsMu.Unlock()
	return func() {
		c.subsMu.Lock()
		delete(c.subs, id)
		c.subsMu.Unlock()
	}
}
