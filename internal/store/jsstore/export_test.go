package jsstore

import "time"

// Test views of a Cluster's loss guard and sweeps, so tests wait on conditions instead of time.

// LossGuardOpen reports whether c may declare losses now.
func (c *Cluster) LossGuardOpen() bool { return c.health.mayDeclareLoss(time.Now()) }

// Sweeps counts c's finished sweeps.
func (c *Cluster) Sweeps() uint64 { return c.sweeps.Load() }

// Running counts c's command handlers running.
func (c *Cluster) Running() int64 { return c.running.Load() }
