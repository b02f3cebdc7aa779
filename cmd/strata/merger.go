package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"strings"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/simpledb"
)

// shippedMergers are the mergers this build knows by name: a database
// written with one opens with it, unless --merger says otherwise.
var shippedMergers = []*simpledb.Merger{simpledb.Uint64AddMerger, simpledb.AppendMerger}

// mergerNone is --merger's value for a database whose merger this build
// does not ship: it opens read-only, and lists the operands of a key
// rather than folding them (see rawMerge).
const mergerNone = "none"

// mergerUsage describes --merger.
var mergerUsage = "the merger to open the database with: " + strings.Join(mergerNames(), ", ") +
	", or none (read-only: a key's merge operands print as a list, unfolded); default: the one it was written with, if shipped"

func mergerNames() []string {
	var names []string
	for _, m := range shippedMergers {
		names = append(names, m.Name)
	}
	return names
}

// withMerger adds --merger to a command's flags.
func withMerger(flags func(fs *flag.FlagSet, c *cli)) func(fs *flag.FlagSet, c *cli) {
	return func(fs *flag.FlagSet, c *cli) {
		fs.StringVar(&c.merger, "merger", "", mergerUsage)
		if flags != nil {
			flags(fs, c)
		}
	}
}

// openMerger returns the merger to open a database with, written with the
// merger named written ("" for none), as --merger (name) asks.
func openMerger(name, written string, readOnly bool) (*simpledb.Merger, error) {
	switch name {
	case "":
		for _, m := range shippedMergers {
			if m.Name == written {
				return m, nil
			}
		}
		return nil, nil // Open refuses a merger it lacks, with a hint (openDB)
	case mergerNone:
		if !readOnly {
			return nil, usagef("--merger none opens a database read-only; this command writes")
		}
		if written == "" {
			return nil, nil
		}
		// The name the manifest holds, so that Open takes it: nothing is
		// written with it.
		return &simpledb.Merger{Name: written, Merge: rawMerge}, nil
	}
	for _, m := range shippedMergers {
		if m.Name == name {
			return m, nil
		}
	}
	return nil, usagef("--merger %q: this build ships %s, and none", name, strings.Join(mergerNames(), ", "))
}

// rawFold marks a value that rawMerge made: the versions it took, framed.
// A stored value that began with it would print as such a list; 21 bytes
// with a zero at each end make that unlikely for text and for numbers.
var rawFold = []byte("\x00strata-raw-operands\x00")

// rawMerge is the merger of --merger none: it keeps both versions, older
// first, each framed by its length, after rawFold, so that the fold of a
// key's value and operands is the list of them, which operands lists.
func rawMerge(_, older, newer []byte) ([]byte, error) {
	out := append([]byte(nil), rawFold...)
	for _, v := range [][]byte{older, newer} {
		for _, part := range operands(v) {
			out = binary.AppendUvarint(out, uint64(len(part)))
			out = append(out, part...)
		}
	}
	return out, nil
}

// operands returns the versions a rawMerge fold holds, oldest first, or
// v alone if it is not one: a fold holds two versions at least.
func operands(v []byte) [][]byte {
	rest, ok := bytes.CutPrefix(v, rawFold)
	if !ok {
		return [][]byte{v}
	}
	var parts [][]byte
	for len(rest) > 0 {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return [][]byte{v} // not a list after all
		}
		parts = append(parts, rest[k:k+int(n)])
		rest = rest[k+int(n):]
	}
	if len(parts) < 2 {
		return [][]byte{v}
	}
	return parts
}

// mergerHint adds to Open's refusal of a database written with a merger
// this build does not ship what to do about it.
func mergerHint(err error) error {
	if errors.Is(err, simpledb.ErrMergerMismatch) {
		return errs.Errorf("%w (strata ships %s; --merger none opens it read-only, its operands unfolded)", err, strings.Join(mergerNames(), ", "))
	}
	return err
}
