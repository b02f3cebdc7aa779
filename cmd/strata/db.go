package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/inspect"
	"github.com/stratadb/strata/internal/units"
	"github.com/stratadb/strata/simpledb"
	"github.com/stratadb/strata/sstables"
)

// openDB opens the database in dir: for inspection as a follower, which
// needs no lock and reads a database another process is writing as of one
// moment; else for writing, creating one only when asked. A database
// another process holds is refused at once for writing, with the lock's
// error.
func openDB(c *cli, dir string, readOnly bool, create bool) (*simpledb.DB, error) {
	opts := &simpledb.Options{Follow: readOnly, ErrorIfNotExists: !create, DisableAutoCompaction: true}
	var written string
	if layout, err := inspect.ReadLayout(dir, nil); err == nil {
		written = layout.Merger
	}
	merger, err := openMerger(c.merger, written, readOnly)
	if err != nil {
		return nil, err
	}
	opts.Merger = merger
	db, err := simpledb.Open(dir, opts)
	if errors.Is(err, simpledb.ErrLocked) {
		return nil, errs.Errorf("%s is in use by another process: %w", dir, err)
	}
	return db, mergerHint(err)
}

func dbLs(c *cli, args []string) error {
	dir := args[0]
	db, err := openDB(c, dir, true, false)
	if err != nil {
		return err
	}
	defer db.Close()
	layout, metas, err := readLayout(dir)
	if err != nil {
		return err
	}
	stats := db.Stats()
	// The levels as the layout has them: the tables listed below are of the
	// same moment, which a database being written has left since.
	var levels [len(layout.Levels)]simpledb.LevelStats
	// The bytes of values each table keeps in blob files: a column of the
	// tables when the database keeps any there.
	inBlobs, anyInBlobs := map[uint64]uint64{}, len(layout.BlobFiles) > 0
	for level, tables := range layout.Levels {
		for _, t := range tables {
			levels[level].Tables++
			levels[level].Bytes += int64(t.Size)
			for _, r := range t.BlobRefs {
				inBlobs[t.Number] += r.ValueBytes
				anyInBlobs = true
			}
		}
	}
	p := c.out
	if p.json {
		obj := map[string]any{"type": "manifest", "path": layout.Manifest, "comparator": layout.Comparator,
			"log_format": layout.LogFormat, "next_file": layout.NextFileNumber, "last_seq": layout.LastSeq}
		if layout.Merger != "" {
			obj["merger"] = layout.Merger
		}
		p.object(obj)
	} else {
		merger := ""
		if layout.Merger != "" {
			merger = ", merger " + layout.Merger
		}
		p.line("manifest   %s (comparator %s%s, log format %d, next file %d, last seq %d)",
			filepath.Base(layout.Manifest), layout.Comparator, merger, layout.LogFormat, layout.NextFileNumber, layout.LastSeq)
		p.line("")
		p.row("level", "tables", "size")
		for level, ls := range levels {
			if ls.Tables > 0 {
				p.row(fmt.Sprintf("L%d", level), fmt.Sprint(ls.Tables), units.Bytes(ls.Bytes))
			}
		}
		p.line("")
		head := []string{"table", "level", "size", "entries", "tombstones", "range dels", "smallest", "largest", "seqs"}
		if anyInBlobs {
			head = append(head, "in blob files")
		}
		p.row(head...)
	}
	for _, tables := range layout.Levels {
		for _, t := range tables {
			m := metas[t.Number]
			if p.json {
				obj := map[string]any{"type": "table", "number": t.Number, "level": t.Level, "size": t.Size,
					"entries": m.Records, "tombstones": m.Tombstones, "range_dels": m.RangeDeletions,
					"smallest_seq": t.SmallestSeq, "largest_seq": t.LargestSeq}
				p.keyField(obj, "smallest", t.Smallest)
				p.keyField(obj, "largest", t.Largest)
				refs := []map[string]any{}
				for _, r := range t.BlobRefs {
					refs = append(refs, blobRefObject(r.Number, r.Values, r.ValueBytes))
				}
				obj["blob_refs"] = refs
				p.object(obj)
				continue
			}
			row := []string{fmt.Sprintf("%06d", t.Number), fmt.Sprintf("L%d", t.Level), units.Bytes(int64(t.Size)),
				fmt.Sprint(m.Records), fmt.Sprint(m.Tombstones), fmt.Sprint(m.RangeDeletions),
				p.key(t.Smallest), p.key(t.Largest), fmt.Sprintf("%d-%d", t.SmallestSeq, t.LargestSeq)}
			if anyInBlobs {
				row = append(row, units.Bytes(int64(inBlobs[t.Number])))
			}
			p.row(row...)
		}
	}
	if !p.json && len(layout.BlobFiles) > 0 {
		p.line("")
		p.row("blob file", "size", "values", "value bytes", "live", "garbage")
	}
	for _, b := range layout.BlobFiles {
		if p.json {
			p.object(map[string]any{"type": "blob_file", "number": b.Number, "size": b.Size, "values": b.Values,
				"value_bytes": b.ValueBytes, "live_values": b.LiveValues, "live_bytes": b.LiveBytes, "garbage": b.Garbage(),
				"id": fmt.Sprintf("%016x", b.ID)})
			continue
		}
		garbage := units.Bytes(int64(b.Garbage()))
		if b.ValueBytes > 0 {
			garbage += fmt.Sprintf(" (%d%%)", b.Garbage()*100/b.ValueBytes)
		}
		p.row(fmt.Sprintf("%06d.blob", b.Number), units.Bytes(int64(b.Size)), fmt.Sprint(b.Values), units.Bytes(int64(b.ValueBytes)),
			fmt.Sprintf("%s (%d values)", units.Bytes(int64(b.LiveBytes)), b.LiveValues), garbage)
	}
	if !p.json {
		p.line("")
		p.row("log", "size", "recorded size")
	}
	for _, l := range layout.Logs {
		var onDisk int64
		if info, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%06d.log", l.Number))); err == nil {
			onDisk = info.Size()
		}
		if p.json {
			p.object(map[string]any{"type": "log", "number": l.Number, "size": onDisk, "recorded_size": l.Size})
			continue
		}
		recorded := "(being written)"
		if l.Size > 0 {
			recorded = units.Bytes(int64(l.Size))
		}
		p.row(fmt.Sprintf("%06d.log", l.Number), units.Bytes(onDisk), recorded)
	}
	if p.json {
		var levelObjs []map[string]any
		for _, ls := range levels {
			levelObjs = append(levelObjs, map[string]any{"tables": ls.Tables, "bytes": ls.Bytes})
		}
		p.object(map[string]any{"type": "stats", "levels": levelObjs, "memstore_bytes": stats.MemstoreBytes,
			"memstore_entries": stats.MemstoreEntries,
			"open_tables":      stats.OpenTables, "obsolete_files": layout.Obsolete})
		return nil
	}
	p.line("")
	switch {
	case len(layout.Logs) == 0:
		p.line("memstore   empty: no logs to replay")
	case stats.MemstoreEntries == 0:
		p.line("memstore   empty: the logs hold no writes to replay")
	default:
		entries := "entries"
		if stats.MemstoreEntries == 1 {
			entries = "entry"
		}
		p.line("memstore   %d %s replayed from the logs, in %s of memory", stats.MemstoreEntries, entries, units.Bytes(stats.MemstoreBytes))
	}
	if len(layout.Obsolete) > 0 {
		p.line("not live   %v (the next Open deletes those that are obsolete database files)", layout.Obsolete)
	}
	if layout.TornEdit != nil {
		p.line("torn edit  %v (Open drops it)", layout.TornEdit)
	}
	return nil
}

// readLayout reads the layout of the database in dir and the metadata of
// its tables. A process writing the database may delete a table between
// the two reads: then it reads both again.
func readLayout(dir string) (*inspect.Layout, map[uint64]sstables.Metadata, error) {
	for attempt := 0; ; attempt++ {
		layout, err := inspect.ReadLayout(dir, nil)
		if err != nil {
			return nil, nil, err
		}
		metas := map[uint64]sstables.Metadata{}
	levels:
		for _, tables := range layout.Levels {
			for _, t := range tables {
				if metas[t.Number], err = tableMetadata(filepath.Join(dir, fmt.Sprintf("%06d.sst", t.Number))); err != nil {
					break levels
				}
			}
		}
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			return layout, metas, err
		}
	}
}

func tableMetadata(path string) (sstables.Metadata, error) {
	r, err := sstables.Open(path, &sstables.ReaderOptions{NoMmap: true})
	if err != nil {
		return sstables.Metadata{}, err
	}
	defer r.Close()
	return r.Metadata(), nil
}

func scanFlags(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&c.lower, "lower", "", "start at this key, inclusive (key syntax above)")
	fs.StringVar(&c.upper, "upper", "", "stop before this key, exclusive (key syntax above)")
	fs.StringVar(&c.prefix, "prefix", "", "only keys with this prefix (key syntax above)")
	fs.BoolVar(&c.reverse, "reverse", false, "from the last key down")
	fs.IntVar(&c.limit, "limit", 0, "print at most this many entries (0: all)")
	fs.BoolVar(&c.count, "count", false, "print only the number of entries")
}

func dbScan(c *cli, args []string) error {
	lower, err := c.arg(c.lower, "--lower")
	if err != nil {
		return err
	}
	upper, err := c.arg(c.upper, "--upper")
	if err != nil {
		return err
	}
	prefix, err := c.arg(c.prefix, "--prefix")
	if err != nil {
		return err
	}
	if c.limit < 0 {
		return usagef("--limit %d: must be 0 (all) or more", c.limit)
	}
	if len(prefix) > 0 {
		if len(lower) > 0 || len(upper) > 0 {
			return usagef("--prefix and --lower/--upper exclude each other")
		}
		lower, upper = prefix, prefixEnd(prefix)
	}
	if len(lower) > 0 && len(upper) > 0 && bytes.Compare(lower, upper) > 0 {
		return usagef("--lower %s is after --upper %s", c.out.key(lower), c.out.key(upper))
	}
	db, err := openDB(c, args[0], true, false)
	if err != nil {
		return err
	}
	defer db.Close()
	it, err := db.NewIterator(nilIfEmpty(lower), nilIfEmpty(upper))
	if err != nil {
		return err
	}
	defer it.Close()
	bar := newProgress(c.stderr, -1, "scan", false)
	defer bar.finish()
	walk := it.All()
	if c.reverse {
		walk = it.Backward()
	}
	n := 0
	for k, v := range walk {
		if c.limit > 0 && n == c.limit {
			break
		}
		n++
		bar.add(1)
		if c.count {
			continue
		}
		if c.out.json {
			c.out.pair(k, v)
		} else {
			c.out.row(c.out.key(k), c.out.value(v))
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if c.count {
		if c.out.json {
			c.out.object(map[string]any{"count": n})
		} else {
			c.out.line("%d", n)
		}
	} else if n == 0 && !c.out.json {
		// Not an error, but say so, with the bounds as read: an empty
		// output alone looks like a bound that was not read as meant.
		fmt.Fprintf(c.stderr, "strata %s: %s\n", c.cmdName, c.out.noKeys(prefix, lower, upper))
	}
	return nil
}

// noKeys says that no key lies within the bounds a scan was given.
func (p *printer) noKeys(prefix, lower, upper []byte) string {
	switch {
	case len(prefix) > 0:
		return "no keys with the prefix " + p.key(prefix)
	case len(lower) > 0 && len(upper) > 0:
		return fmt.Sprintf("no keys in [%s, %s)", p.key(lower), p.key(upper))
	case len(lower) > 0:
		return "no keys at or after " + p.key(lower)
	case len(upper) > 0:
		return "no keys before " + p.key(upper)
	}
	return "the database holds no keys"
}

// prefixEnd returns the least key after every key with prefix p, or nil
// when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func dbGet(c *cli, args []string) error {
	key, err := c.arg(args[1], "KEY")
	if err != nil {
		return err
	}
	db, err := openDB(c, args[0], true, false)
	if err != nil {
		return err
	}
	defer db.Close()
	v, err := db.Get(key)
	if errors.Is(err, simpledb.ErrNotFound) {
		return errs.Errorf("key %s: %w", c.out.key(key), err)
	}
	if err != nil {
		return err
	}
	if c.out.json {
		c.out.pair(key, v)
	} else {
		c.out.line("%s", c.out.value(v))
	}
	return nil
}

func putFlags(fs *flag.FlagSet, c *cli) {
	fs.BoolVar(&c.create, "create", false, "create the database if DIR holds none")
}

func dbPut(c *cli, args []string) error {
	key, err := c.arg(args[1], "KEY")
	if err != nil {
		return err
	}
	value, err := c.valueArg(args[2])
	if err != nil {
		return err
	}
	return writeDB(c, args[0], c.create, func(db *simpledb.DB) error { return db.Put(key, value, simpledb.DefaultSync) })
}

func dbDelete(c *cli, args []string) error {
	key, err := c.arg(args[1], "KEY")
	if err != nil {
		return err
	}
	return writeDB(c, args[0], false, func(db *simpledb.DB) error { return db.Delete(key, simpledb.DefaultSync) })
}

// writeDB opens the database for writing (creating it with create),
// applies write, synced, and closes it.
func writeDB(c *cli, dir string, create bool, write func(*simpledb.DB) error) error {
	db, err := openDB(c, dir, false, create)
	if err != nil {
		return err
	}
	if err := write(db); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

func dbVerify(c *cli, args []string) error {
	dir := args[0]
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return errs.Errorf("%w: %s is not a database directory", simpledb.ErrNotDB, dir)
	}
	bar := newProgress(c.stderr, dirSize(dir), "verify", true)
	report, err := simpledb.Verify(dir, nil, bar.add)
	bar.finish()
	if err != nil {
		return err
	}
	for _, n := range report.Notes {
		if c.out.json {
			c.out.object(map[string]any{"type": "note", "note": n})
		} else {
			c.out.line("note: %s", n)
		}
	}
	printDamage(c.out, report.Damage)
	if c.out.json {
		c.out.object(map[string]any{"type": "summary", "tables": report.Tables, "blob_files": report.BlobFiles, "logs": report.Logs, "bytes": report.Bytes,
			"entries": report.Entries, "batches": report.Batches, "damaged": len(report.Damage)})
	} else {
		state := "whole"
		if len(report.Damage) > 0 {
			state = fmt.Sprintf("%d damage(s) found", len(report.Damage))
		}
		manifest := "the manifest"
		if report.Manifest == "" {
			manifest = "no manifest (it could not be read)"
		}
		blobFiles := "blob files"
		if report.BlobFiles == 1 {
			blobFiles = "blob file"
		}
		c.out.line("verified %d tables (%d entries), %d %s, %d logs (%d batches), %s: %s read; %s",
			report.Tables, report.Entries, report.BlobFiles, blobFiles, report.Logs, report.Batches, manifest, units.Bytes(report.Bytes), state)
	}
	if len(report.Damage) > 0 {
		return errDamaged
	}
	return nil
}

// dirSize sums the sizes of the files in dir, for a progress bar.
func dirSize(dir string) int64 {
	var total int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
	}
	return total
}

func dbCompact(c *cli, args []string) error {
	bar := newProgress(c.stderr, -1, "compact", false)
	defer bar.finish()
	var before, after simpledb.Stats
	err := writeDB(c, args[0], false, func(db *simpledb.DB) error {
		before = db.Stats()
		if err := db.Compact(); err != nil {
			return err
		}
		after = db.Stats()
		return nil
	})
	if err != nil {
		return err
	}
	for level := range after.Levels {
		b, a := before.Levels[level], after.Levels[level]
		if b.Tables == 0 && a.Tables == 0 {
			continue
		}
		if c.out.json {
			c.out.object(map[string]any{"level": level, "tables_before": b.Tables, "bytes_before": b.Bytes, "tables": a.Tables, "bytes": a.Bytes})
		} else {
			c.out.row(fmt.Sprintf("L%d", level), fmt.Sprintf("%d tables, %s", b.Tables, units.Bytes(b.Bytes)), "->", fmt.Sprintf("%d tables, %s", a.Tables, units.Bytes(a.Bytes)))
		}
	}
	return nil
}

func dbCheckpoint(c *cli, args []string) error {
	db, err := openDB(c, args[0], true, false)
	if err != nil {
		return err
	}
	defer db.Close()
	bar := newProgress(c.stderr, -1, "checkpoint", false)
	err = db.Checkpoint(args[1])
	bar.finish()
	if err != nil {
		return err
	}
	total := dirSize(args[1])
	if c.out.json {
		c.out.object(map[string]any{"checkpoint": args[1], "bytes": total})
	} else {
		c.out.line("checkpoint of %s in %s: %s", args[0], args[1], units.Bytes(total))
	}
	return nil
}

// printDamage prints each damage: its file and offset where it names
// them, after "damage:" in place of the package that found it.
func printDamage(p *printer, damage []error) {
	for _, err := range damage {
		msg, _ := errs.Unnamed(err.Error())
		if !p.json {
			p.line("damage: %s", msg)
			continue
		}
		obj := map[string]any{"type": "damage", "error": msg}
		var ce *sstables.CorruptionError
		if errors.As(err, &ce) {
			obj["file"], obj["offset"] = ce.Path, ce.Offset
		}
		p.object(obj)
	}
}
