package inspect

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/stratadb/strata/simpledb"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// builtDB returns a filesystem holding a database in /db with tables in L0
// and L1 and writes in its log: keys 0 to 449, written in three rounds,
// the last in the log, and key0001 deleted.
func builtDB(t *testing.T) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	db, err := simpledb.Open("/db", &simpledb.Options{FS: mem, DisableAutoCompaction: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	put := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, db.Put(fmt.Appendf(nil, "key%04d", i), fmt.Appendf(nil, "value%d", i), simpledb.DefaultSync))
		}
	}
	put(0, 300)
	require.NoError(t, db.Compact())
	put(200, 400)
	require.NoError(t, db.Flush())
	put(350, 450)
	require.NoError(t, db.Delete([]byte("key0001"), simpledb.DefaultSync))
	st := db.Stats()
	require.Positive(t, st.Levels[0].Tables)
	require.Positive(t, st.Levels[1].Tables)
	require.NoError(t, db.Close())
	return mem
}

// ReadLayout describes what the manifest says, and the files are there:
// each table of its recorded size, the logs after the last flush.
func TestReadLayout(t *testing.T) {
	mem := builtDB(t)
	l, err := ReadLayout("/db", &Options{FS: mem})
	require.NoError(t, err)
	require.Equal(t, "/db/MANIFEST", l.Manifest[:len("/db/MANIFEST")])
	require.Equal(t, sstables.Bytewise.Name, l.Comparator)
	require.Equal(t, uint64(7), l.LogFormat, "the current log format")
	require.NotEmpty(t, l.Levels[0])
	require.NotEmpty(t, l.Levels[1])
	require.NotEmpty(t, l.Logs)
	require.Nil(t, l.TornEdit)
	for level, tables := range l.Levels {
		for i, tb := range tables {
			require.Equal(t, level, tb.Level)
			info, err := mem.Stat(fmt.Sprintf("/db/%06d.sst", tb.Number))
			require.NoError(t, err)
			require.Equal(t, tb.Size, uint64(info.Size()))
			if level > 0 && i > 0 {
				require.Negative(t, slices.Compare(tables[i-1].Largest, tb.Smallest), "L%d in key order, disjoint", level)
			}
		}
	}

	// The edits, applied in order, give the same tables.
	tables := map[uint64]int{}
	require.NoError(t, ReadManifest(l.Manifest, &Options{FS: mem}, func(e ManifestEdit) error {
		for _, d := range e.Deleted {
			delete(tables, d.Number)
		}
		for _, a := range e.Added {
			tables[a.Number] = a.Level
		}
		return nil
	}))
	want := map[uint64]int{}
	for level, ts := range l.Levels {
		for _, tb := range ts {
			want[tb.Number] = level
		}
	}
	require.Equal(t, want, tables)

	_, err = ReadLayout("/nothing", &Options{FS: mem})
	require.ErrorIs(t, err, ErrNotDB)
	require.NoError(t, mem.MkdirAll("/empty", 0o755))
	_, err = ReadLayout("/empty", &Options{FS: mem})
	require.ErrorIs(t, err, ErrNotDB)
}

// ReadLog shows every batch of a log with its sequence numbers: the
// writes after the last flush, in order.
func TestReadLog(t *testing.T) {
	mem := builtDB(t)
	l, err := ReadLayout("/db", &Options{FS: mem})
	require.NoError(t, err)
	var ops []LogOp
	var last uint64
	for _, lg := range l.Logs {
		records := 0
		require.NoError(t, ReadLog(fmt.Sprintf("/db/%06d.log", lg.Number), l.LogFormat, &Options{FS: mem}, func(r LogRecord) error {
			if records++; records == 1 {
				require.Equal(t, &LogIdentity{Number: lg.Number, ID: lg.ID}, r.Identity, "a log starts with its identity, the one the manifest records")
				return nil
			}
			require.Nil(t, r.Identity)
			require.Greater(t, r.Seq, last)
			require.Len(t, r.Ops, r.Count)
			require.Equal(t, uint32(lg.ID), r.Log, "stamped with its log's identity")
			for _, op := range r.Ops {
				op.Key, op.Value = slices.Clone(op.Key), slices.Clone(op.Value)
				ops = append(ops, op)
				last = op.Seq
			}
			return nil
		}))
	}
	// builtDB's last writes: puts of 350 to 449, then a delete.
	require.Len(t, ops, 101)
	for i, op := range ops[:100] {
		require.Equal(t, OpPut, op.Kind)
		require.Equal(t, fmt.Sprintf("key%04d", 350+i), string(op.Key))
	}
	require.Equal(t, LogOp{Seq: ops[99].Seq + 1, Kind: OpDelete, Key: []byte("key0001")}, ops[100])
	require.Equal(t, "delete-range", OpDeleteRange.String())

	err = ReadLog(fmt.Sprintf("/db/%06d.log", l.Logs[0].Number), 9, &Options{FS: mem}, func(LogRecord) error { return nil })
	require.ErrorIs(t, err, ErrUnknownLogFormat)
}

// builtBlobDB returns a filesystem holding a database in /db whose values
// of 2 KiB lie in blob files: big0 to big3 and small0 to small3 (values of
// 10 bytes) flushed, then big0 overwritten and flushed, then all compacted
// into L1 with blob files never rewritten, so that the first blob file
// holds 2 KiB no table names.
func builtBlobDB(t *testing.T) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	db, err := simpledb.Open("/db", &simpledb.Options{FS: mem, DisableAutoCompaction: true, BlobRewriteRatio: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	for i := range 4 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "big%d", i), bytes.Repeat([]byte{'a' + byte(i)}, 2<<10), simpledb.DefaultSync))
		require.NoError(t, db.Put(fmt.Appendf(nil, "small%d", i), fmt.Appendf(nil, "value%05d", i), simpledb.DefaultSync))
	}
	require.NoError(t, db.Flush())
	require.NoError(t, db.Put([]byte("big0"), bytes.Repeat([]byte{'z'}, 2<<10), simpledb.DefaultSync))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact())
	require.NoError(t, db.Close())
	return mem
}

// ReadLayout lists the blob files the manifest names, each there, of its
// recorded size, with the bytes the live tables name and the garbage; the
// tables list their references; a blob file the manifest does not name is
// obsolete.
func TestReadLayoutBlobFiles(t *testing.T) {
	mem := builtBlobDB(t)
	f, err := mem.Create("/db/000099.blob")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	l, err := ReadLayout("/db", &Options{FS: mem})
	require.NoError(t, err)
	require.Contains(t, l.Obsolete, "000099.blob")

	live := map[uint64]BlobRef{}
	for _, tables := range l.Levels {
		for _, tb := range tables {
			for _, r := range tb.BlobRefs {
				sum := live[r.Number]
				sum.Values, sum.ValueBytes = sum.Values+r.Values, sum.ValueBytes+r.ValueBytes
				live[r.Number] = sum
			}
		}
	}
	require.Len(t, l.BlobFiles, 2, "one blob file per flush, none rewritten")
	for i, b := range l.BlobFiles {
		name := fmt.Sprintf("%06d.blob", b.Number)
		require.NotContains(t, l.Obsolete, name)
		info, err := mem.Stat("/db/" + name)
		require.NoError(t, err)
		require.Equal(t, uint64(info.Size()), b.Size)
		require.NotZero(t, b.ID)
		require.Equal(t, live[b.Number].Values, b.LiveValues)
		require.Equal(t, live[b.Number].ValueBytes, b.LiveBytes)
		if i > 0 {
			require.Greater(t, b.Number, l.BlobFiles[i-1].Number, "by number")
		}
	}
	first, second := l.BlobFiles[0], l.BlobFiles[1]
	require.Equal(t, BlobFileInfo{Number: first.Number, Size: first.Size, Values: 4, ValueBytes: 8 << 10, ID: first.ID,
		LiveValues: 3, LiveBytes: 6 << 10}, first, "big0's first value overwritten")
	require.Equal(t, uint64(2<<10), first.Garbage())
	require.Equal(t, uint64(1), second.LiveValues)
	require.Zero(t, second.Garbage())

	// The edits, applied in order, give the same blob files and the same
	// tables' references.
	blobs, refs := map[uint64]BlobFileInfo{}, map[uint64][]BlobRef{}
	require.NoError(t, ReadManifest(l.Manifest, &Options{FS: mem}, func(e ManifestEdit) error {
		for _, num := range e.DeletedBlobs {
			delete(blobs, num)
		}
		for _, b := range e.AddedBlobs {
			require.Zero(t, b.LiveBytes, "an edit records no table's use of a file")
			blobs[b.Number] = b
		}
		for _, d := range e.Deleted {
			delete(refs, d.Number)
		}
		for _, a := range e.Added {
			refs[a.Number] = a.BlobRefs
		}
		return nil
	}))
	for _, b := range l.BlobFiles {
		b.LiveValues, b.LiveBytes = 0, 0
		require.Equal(t, b, blobs[b.Number])
	}
	require.Len(t, blobs, len(l.BlobFiles))
	for _, tables := range l.Levels {
		for _, tb := range tables {
			require.Equal(t, tb.BlobRefs, refs[tb.Number])
		}
	}
}

// A database without large values has no blob files, and its tables no
// references.
func TestReadLayoutNoBlobFiles(t *testing.T) {
	l, err := ReadLayout("/db", &Options{FS: builtDB(t)})
	require.NoError(t, err)
	require.Empty(t, l.BlobFiles)
	for _, tables := range l.Levels {
		for _, tb := range tables {
			require.Nil(t, tb.BlobRefs)
		}
	}
}
