package inspect

import (
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
