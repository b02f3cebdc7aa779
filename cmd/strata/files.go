package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/inspect"
	"github.com/stratadb/strata/internal/units"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
)

// checkFile returns an error naming what was expected unless path is a
// regular file.
func checkFile(path, expected string) error {
	info, err := os.Stat(path)
	if err != nil {
		return usagef("%s: expected %s: %v", path, expected, err)
	}
	if !info.Mode().IsRegular() {
		return usagef("%s: expected %s, found a directory", path, expected)
	}
	return nil
}

// checkRecordio returns an error naming what was expected unless path is
// a regular file that starts with a recordio file header, as every file of
// a database does, and whose name is not that of another kind of database
// file.
func checkRecordio(path, expected string) error {
	if err := checkFile(path, expected); err != nil {
		return err
	}
	if kind := kindByName(path); kind != "" && kind != expected {
		return usagef("%s is not %s: by its name it is %s", path, expected, kind)
	}
	r, err := recordio.Open(path, &recordio.ReaderOptions{NoMmap: true})
	if err != nil {
		return notA(path, expected, err)
	}
	return r.Close()
}

// kindByName names the kind of database file path's name says it is, or
// "" for a name a database does not give its files.
func kindByName(path string) string {
	name := filepath.Base(path)
	switch {
	case strings.HasSuffix(name, ".sst"):
		return "a table"
	case strings.HasSuffix(name, ".log"):
		return "a log"
	case strings.HasSuffix(name, ".blob"):
		return "a blob file"
	case strings.HasPrefix(name, "MANIFEST-"):
		return "a manifest"
	}
	return ""
}

// notA wraps the error of reading a file that is not of the kind a command
// reads, saying what was expected.
func notA(path, expected string, err error) error {
	if errors.Is(err, recordio.ErrUnknownVersion) || errors.Is(err, recordio.ErrTruncatedHeader) {
		return usageError{fmt.Sprintf("%s is not %s: %v", path, expected, err)}
	}
	return err
}

func manifestDump(c *cli, args []string) error {
	path := args[0]
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		if path, err = inspect.CurrentManifest(path, nil); err != nil {
			return err
		}
	} else if err := checkRecordio(path, "a manifest"); err != nil {
		return err
	}
	p := c.out
	err := inspect.ReadManifest(path, nil, func(e inspect.ManifestEdit) error {
		if p.json {
			obj := map[string]any{"type": "edit", "offset": e.Offset}
			for name, v := range map[string]uint64{"log_number": e.LogNumber, "next_file": e.NextFileNumber, "last_seq": e.LastSeq, "log_format": e.LogFormat} {
				if v != 0 {
					obj[name] = v
				}
			}
			if e.Comparator != "" {
				obj["comparator"] = e.Comparator
			}
			if e.Merger != "" {
				obj["merger"] = e.Merger
			}
			added, deleted, logs := []map[string]any{}, []map[string]any{}, []map[string]any{}
			for _, t := range e.Added {
				a := map[string]any{"level": t.Level, "number": t.Number, "size": t.Size, "smallest_seq": t.SmallestSeq, "largest_seq": t.LargestSeq}
				p.keyField(a, "smallest", t.Smallest)
				p.keyField(a, "largest", t.Largest)
				if t.ID != 0 {
					a["id"] = fmt.Sprintf("%016x", t.ID)
				}
				if len(t.BlobRefs) > 0 {
					var refs []map[string]any
					for _, r := range t.BlobRefs {
						refs = append(refs, blobRefObject(r.Number, r.Values, r.ValueBytes))
					}
					a["blob_refs"] = refs
				}
				added = append(added, a)
			}
			for _, t := range e.Deleted {
				deleted = append(deleted, map[string]any{"level": t.Level, "number": t.Number})
			}
			addedBlobs := []map[string]any{}
			for _, b := range e.AddedBlobs {
				addedBlobs = append(addedBlobs, map[string]any{"number": b.Number, "size": b.Size, "values": b.Values,
					"value_bytes": b.ValueBytes, "id": fmt.Sprintf("%016x", b.ID)})
			}
			obj["added_blobs"], obj["deleted_blobs"] = addedBlobs, append([]uint64{}, e.DeletedBlobs...)
			for _, l := range e.Logs {
				lg := map[string]any{"number": l.Number, "size": l.Size}
				if l.ID != 0 {
					lg["id"] = fmt.Sprintf("%016x", l.ID)
				}
				logs = append(logs, lg)
			}
			obj["added"], obj["deleted"], obj["logs"] = added, deleted, logs
			p.object(obj)
			return nil
		}
		head := fmt.Sprintf("edit at %d:", e.Offset)
		if e.Comparator != "" {
			head += " comparator " + e.Comparator
		}
		if e.Merger != "" {
			head += " merger " + e.Merger
		}
		for _, f := range []struct {
			name string
			v    uint64
		}{{"log", e.LogNumber}, {"next file", e.NextFileNumber}, {"last seq", e.LastSeq}, {"log format", e.LogFormat}} {
			if f.v != 0 {
				head += fmt.Sprintf(" %s %d", f.name, f.v)
			}
		}
		p.line("%s", head)
		for _, t := range e.Deleted {
			p.row("  delete", fmt.Sprintf("L%d", t.Level), fmt.Sprintf("%06d", t.Number))
		}
		for _, t := range e.Added {
			row := []string{"  add", fmt.Sprintf("L%d", t.Level), fmt.Sprintf("%06d", t.Number), units.Bytes(int64(t.Size)),
				p.key(t.Smallest) + " .. " + p.key(t.Largest), fmt.Sprintf("seqs %d-%d", t.SmallestSeq, t.LargestSeq), identity(t.ID)}
			for _, r := range t.BlobRefs {
				row = append(row, blobRef(r.Number, r.Values, r.ValueBytes))
			}
			p.row(row...)
		}
		for _, num := range e.DeletedBlobs {
			p.row("  delete blob", fmt.Sprintf("%06d.blob", num))
		}
		for _, b := range e.AddedBlobs {
			p.row("  add blob", fmt.Sprintf("%06d.blob", b.Number), units.Bytes(int64(b.Size)),
				fmt.Sprintf("%d values, %s", b.Values, units.Bytes(int64(b.ValueBytes))), identity(b.ID))
		}
		for _, l := range e.Logs {
			if l.Size == 0 {
				p.row("  log", fmt.Sprintf("%06d.log", l.Number), "started", identity(l.ID))
			} else {
				p.row("  log", fmt.Sprintf("%06d.log", l.Number), fmt.Sprintf("closed at %d bytes", l.Size))
			}
		}
		return nil
	})
	return notA(path, "a manifest", err)
}

// identity shows a table's, log's or blob file's identity, if it has one.
func identity(id uint64) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf("id %016x", id)
}

func logFlags(fs *flag.FlagSet, c *cli) {
	fs.Uint64Var(&c.logFormat, "format", 0, "the log format (1 to 7); default: the format the manifest beside FILE records, else the current one")
}

func logDump(c *cli, args []string) error {
	path := args[0]
	if err := checkRecordio(path, "a log"); err != nil {
		return err
	}
	format := c.logFormat
	if format == 0 {
		if layout, err := inspect.ReadLayout(filepath.Dir(path), nil); err == nil {
			format = layout.LogFormat
		}
	}
	p := c.out
	records := 0
	err := inspect.ReadLog(path, format, nil, func(r inspect.LogRecord) error {
		if id := r.Identity; id != nil {
			if p.json {
				p.object(map[string]any{"type": "identity", "offset": r.Offset, "size": r.Size, "log": id.Number, "id": fmt.Sprintf("%016x", id.ID)})
			} else {
				p.line("identity at %d (%d bytes): log %d, id %016x, stamp %08x", r.Offset, r.Size, id.Number, id.ID, uint32(id.ID))
			}
			return nil
		}
		records++
		if p.json {
			obj := map[string]any{"type": "batch", "offset": r.Offset, "size": r.Size, "seq": r.Seq, "count": r.Count, "synced": r.Synced, "log": fmt.Sprintf("%08x", r.Log)}
			var ops []map[string]any
			for _, op := range r.Ops {
				o := map[string]any{"seq": op.Seq, "kind": op.Kind.String()}
				p.keyField(o, "key", op.Key)
				switch op.Kind {
				case inspect.OpPut, inspect.OpMerge:
					p.valueField(o, "value", op.Value)
				case inspect.OpDelete:
				default:
					p.keyField(o, "value", op.Value) // a range deletion's end
				}
				ops = append(ops, o)
			}
			obj["ops"] = ops
			p.object(obj)
			return nil
		}
		p.line("batch at %d (%d bytes): seq %d, %d op(s), synced %d, stamp %08x", r.Offset, r.Size, r.Seq, r.Count, r.Synced, r.Log)
		for _, op := range r.Ops {
			switch op.Kind {
			case inspect.OpPut, inspect.OpMerge:
				p.row("  ", fmt.Sprint(op.Seq), op.Kind.String(), p.key(op.Key), p.value(op.Value))
			case inspect.OpDelete:
				p.row("  ", fmt.Sprint(op.Seq), "delete", p.key(op.Key))
			default:
				p.row("  ", fmt.Sprint(op.Seq), op.Kind.String(), "["+p.key(op.Key)+", "+p.key(op.Value)+")")
			}
		}
		return nil
	})
	if err != nil {
		return notA(path, "a log", err)
	}
	if !p.json {
		p.line("%d batch(es)", records)
	}
	return nil
}

func sstFlags(fs *flag.FlagSet, c *cli) {
	fs.BoolVar(&c.entries, "entries", false, "print every entry too")
}

func sstDump(c *cli, args []string) error {
	path := args[0]
	if err := checkRecordio(path, "a table"); err != nil {
		return err
	}
	// The values the table keeps in blob files are read from those beside
	// it, as in its database; a blob file not there leaves its values'
	// handles shown instead.
	blobs := newDirBlobs(filepath.Dir(path))
	defer blobs.close()
	r, err := sstables.Open(path, &sstables.ReaderOptions{NoMmap: true, Blobs: blobs})
	if errors.Is(err, sstables.ErrCorruption) && !errors.Is(err, recordio.ErrUnknownVersion) {
		return errs.Errorf("%s is not a table, or a damaged one: %w", path, err)
	}
	if err != nil {
		return notA(path, "a table", err)
	}
	defer r.Close()
	m := r.Metadata()
	p := c.out
	index, err := r.Index()
	if err != nil {
		return err
	}
	if p.json {
		obj := map[string]any{"type": "properties", "format_version": m.FormatVersion, "file_size": m.FileSize, "comparator": m.Comparator,
			"codec": m.Codec.String(), "records": m.Records, "tombstones": m.Tombstones, "range_dels": m.RangeDeletions,
			"min_seq": m.MinSeq, "max_seq": m.MaxSeq, "data_blocks": m.DataBlocks, "data_size": m.DataSize, "index_size": m.IndexSize,
			"filter_size": m.FilterSize, "block_size": m.BlockSize, "restart_interval": m.RestartInterval,
			"bloom_bits_per_key": m.BloomBitsPerKey, "raw_key_size": m.RawKeySize, "raw_value_size": m.RawValueSize,
			"created": time.Unix(0, m.CreatedUnixNano).UTC().Format(time.RFC3339)}
		refs := []map[string]any{}
		for _, r := range m.BlobRefs {
			refs = append(refs, blobRefObject(r.FileNum, r.Values, r.ValueBytes))
		}
		obj["blob_refs"] = refs
		p.keyField(obj, "min_key", m.MinKey)
		p.keyField(obj, "max_key", m.MaxKey)
		p.object(obj)
	} else {
		p.line("%s: table format %d, %s", path, m.FormatVersion, units.Bytes(int64(m.FileSize)))
		for _, kv := range [][2]string{
			{"comparator", m.Comparator},
			{"codec", m.Codec.String()},
			{"created", time.Unix(0, m.CreatedUnixNano).UTC().Format(time.RFC3339)},
			{"entries", fmt.Sprintf("%d (%d tombstones)", m.Records, m.Tombstones)},
			{"keys", p.key(m.MinKey) + " .. " + p.key(m.MaxKey)},
			{"seqs", fmt.Sprintf("%d-%d", m.MinSeq, m.MaxSeq)},
			{"raw keys, values", units.Bytes(int64(m.RawKeySize)) + ", " + units.Bytes(int64(m.RawValueSize))},
			{"data blocks", fmt.Sprintf("%d, %s (block size %s, restart interval %d)", m.DataBlocks, units.Bytes(int64(m.DataSize)), units.Bytes(int64(m.BlockSize)), m.RestartInterval)},
			{"index", fmt.Sprintf("%d entries, %s", len(index), units.Bytes(int64(m.IndexSize)))},
			{"bloom filter", bloomLine(m)},
			{"range deletions", fmt.Sprintf("%d fragment(s), %s", m.RangeDeletions, units.Bytes(int64(m.RangeDelSize)))},
			{"values in blob files", tableBlobRefs(m.BlobRefs)},
		} {
			p.row(kv[0], kv[1])
		}
		p.line("")
		p.line("index:")
		p.row("  block", "offset", "length", "separator")
	}
	for i, e := range index {
		if p.json {
			obj := map[string]any{"type": "index", "block": i, "offset": e.Block.Offset, "length": e.Block.Length}
			p.keyField(obj, "separator", e.Separator)
			p.object(obj)
		} else {
			p.row(fmt.Sprintf("  %d", i), fmt.Sprint(e.Block.Offset), fmt.Sprint(e.Block.Length), p.key(e.Separator))
		}
	}
	for _, f := range r.RangeDeletions() {
		if p.json {
			obj := map[string]any{"type": "range_del", "seqs": f.Seqs}
			p.keyField(obj, "start", f.Start)
			p.keyField(obj, "end", f.End)
			p.object(obj)
		} else {
			p.row("range del", "["+p.key(f.Start)+", "+p.key(f.End)+")", fmt.Sprintf("seqs %v", f.Seqs))
		}
	}
	if !c.entries {
		return nil
	}
	if !p.json {
		p.line("")
		p.line("entries:")
	}
	it := r.NewIterator(nil)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		h, inBlob := it.BlobHandle() // a malformed handle stops the iterator
		unread := inBlob && !blobs.has(h.FileNum)
		var value []byte
		if it.Valid() && !unread && it.Kind() != sstables.KindDelete {
			value = it.Value() // so does a value in a blob file that does not read
		}
		if !it.Valid() {
			break // it.Err says why
		}
		if p.json {
			obj := map[string]any{"type": "entry", "seq": it.Seq(), "kind": it.Kind().String()}
			p.keyField(obj, "key", it.Key())
			switch {
			case unread:
				obj["blob"] = map[string]any{"number": h.FileNum, "offset": h.Offset, "length": h.Length, "value_length": h.ValueLen}
			case it.Kind() != sstables.KindDelete:
				p.valueField(obj, "value", value)
			}
			p.object(obj)
			continue
		}
		switch {
		case unread:
			p.row("  "+p.key(it.Key()), fmt.Sprint(it.Seq()), it.Kind().String(), blobHandle(h))
		case it.Kind() != sstables.KindDelete:
			p.row("  "+p.key(it.Key()), fmt.Sprint(it.Seq()), it.Kind().String(), p.value(value))
		default:
			p.row("  "+p.key(it.Key()), fmt.Sprint(it.Seq()), it.Kind().String())
		}
	}
	return it.Err()
}

// tableBlobRefs shows a table's references into blob files.
func tableBlobRefs(refs []sstables.BlobRef) string {
	if len(refs) == 0 {
		return "none"
	}
	var s []string
	for _, r := range refs {
		s = append(s, blobRef(r.FileNum, r.Values, r.ValueBytes))
	}
	return strings.Join(s, ", ")
}

func bloomLine(m sstables.Metadata) string {
	if m.FilterSize == 0 {
		return "none"
	}
	return fmt.Sprintf("%s, %d bits per key", units.Bytes(int64(m.FilterSize)), m.BloomBitsPerKey)
}

func sstVerify(c *cli, args []string) error {
	path := args[0]
	if err := checkRecordio(path, "a table"); err != nil {
		return err
	}
	var damage []error
	st, err := sstables.VerifyFile(path, &sstables.ReaderOptions{NoMmap: true}, func(err error) { damage = append(damage, err) })
	if err != nil {
		return err
	}
	if len(damage) > 0 && errors.Is(damage[0], recordio.ErrUnknownVersion) {
		return notA(path, "a table", damage[0])
	}
	printDamage(c.out, damage)
	if c.out.json {
		c.out.object(map[string]any{"type": "summary", "blocks": st.Blocks, "bytes": st.Bytes, "entries": st.Entries, "damaged": len(damage)})
	} else {
		state := "whole"
		if len(damage) > 0 {
			state = fmt.Sprintf("%d damage(s) found", len(damage))
		}
		c.out.line("verified %d data blocks (%s), %d entries: %s", st.Blocks, units.Bytes(int64(st.Bytes)), st.Entries, state)
	}
	if len(damage) > 0 {
		return errDamaged
	}
	return nil
}

func rioFlags(fs *flag.FlagSet, c *cli) {
	fs.BoolVar(&c.resync, "resync", false, "skip past damage to the next valid record and go on")
}

// rioScan reads every record of a recordio file, calling record for each
// and damage for each damaged place; with resync it goes on past damage,
// else it stops at the first.
func rioScan(path string, resync bool, record func(recordio.FileHeader, recordio.RecordInfo), damage func(error)) error {
	if err := checkFile(path, "a recordio file"); err != nil {
		return err
	}
	r, err := recordio.Open(path, &recordio.ReaderOptions{NoMmap: true, ZeroCopy: true})
	if err != nil {
		return notA(path, "a recordio file", err)
	}
	defer r.Close()
	return r.Scan(resync, func(info recordio.RecordInfo) { record(r.Header(), info) }, damage)
}

func rioDump(c *cli, args []string) error {
	p := c.out
	var damaged, records int
	headerShown := false
	err := rioScan(args[0], c.resync, func(h recordio.FileHeader, info recordio.RecordInfo) {
		if !headerShown {
			headerShown = true
			if p.json {
				p.object(map[string]any{"type": "header", "version": h.Version.String(), "codec": h.Codec.String()})
			} else {
				p.line("%s: %s, codec %s", args[0], h.Version, h.Codec)
				p.row("offset", "size", "length", "stored")
			}
		}
		records++
		stored := "plain"
		switch {
		case info.Nil:
			stored = "nil"
		case info.Compressed:
			stored = h.Codec.String()
		}
		if p.json {
			p.object(map[string]any{"type": "record", "offset": info.Offset, "size": info.Size, "length": info.Length, "stored": stored})
		} else {
			p.row(fmt.Sprint(info.Offset), fmt.Sprint(info.Size), fmt.Sprint(info.Length), stored)
		}
	}, func(err error) {
		damaged++
		printDamage(p, []error{err})
	})
	if err != nil {
		return err
	}
	if !p.json {
		p.line("%d record(s)", records)
	}
	if damaged > 0 {
		return errDamaged
	}
	return nil
}

func rioVerify(c *cli, args []string) error {
	var damage []error
	var records int
	var bytes int64
	err := rioScan(args[0], true, func(_ recordio.FileHeader, info recordio.RecordInfo) {
		records++
		bytes += info.Size
	}, func(err error) { damage = append(damage, err) })
	if err != nil {
		return err
	}
	printDamage(c.out, damage)
	if c.out.json {
		c.out.object(map[string]any{"type": "summary", "records": records, "bytes": bytes, "damaged": len(damage)})
	} else {
		state := "whole"
		if len(damage) > 0 {
			state = fmt.Sprintf("%d damage(s) found", len(damage))
		}
		c.out.line("verified %d records (%s): %s", records, units.Bytes(bytes), state)
	}
	if len(damage) > 0 {
		return errDamaged
	}
	return nil
}
