// Package benchmark holds Strata's benchmark tables. They reproduce
// go-sstables' benchmarks under the same names, sizes and operations, so the
// figures can be set side by side, and fix what those got wrong: data is
// seeded, reads are checked, bytes are counted honestly, and every target is
// measured against a baseline that runs in the same invocation (these
// machines are noisy).
//
// Run them with `make bench`; see the Makefile for the groups and
// README.md for the latest tables.
package benchmark
