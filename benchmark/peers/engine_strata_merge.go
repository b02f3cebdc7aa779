//go:build strata_merge

// The build tag keeps this file out until simpledb's Merge lands; it goes
// then, and the counter workloads' Merge row gets Strata's figure.

package main

import "github.com/stratadb/strata/simpledb"

// Strata runs open with the merge operator that adds 8-byte little-endian
// uint64s, as Pebble's uint64Adder does.
func init() { strataOptions.Merger = simpledb.Uint64AddMerger }

// Merge writes operand as a merge operand, with the database's durability
// (Options.NoSync), as Put's.
func (e *strataEngine) Merge(key, operand []byte) error {
	return e.db.Merge(key, operand, simpledb.DefaultSync)
}
