//go:build race

// Package race reports whether the race detector is on. Allocation tests
// skip under it: it makes sync.Pool drop items at random, so pooled state
// is reallocated.
package race

// Enabled is true when built with -race.
const Enabled = true
