package simpledb

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// recordSink collects what a recordio.Writer writes.
type recordSink struct{ bytes.Buffer }

func (*recordSink) Sync() error  { return nil }
func (*recordSink) Close() error { return nil }

// recordFile returns a recordio file of records, as the database writes
// its logs and manifests.
func recordFile(t *testing.T, records ...[]byte) []byte {
	t.Helper()
	var sink recordSink
	w, err := recordio.NewWriter(&sink, logWriterOptions)
	require.NoError(t, err)
	for _, rec := range records {
		_, err := w.Write(rec)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return sink.Bytes()
}

// framed returns records as a log's file holds them after its header.
func framed(t *testing.T, records ...[]byte) []byte {
	return recordFile(t, records...)[recordio.FileHeaderSize:]
}

// logRecord returns a log record of one put, as written to the log whose
// batches carry stamp.
func logRecord(stamp uint32, seq uint64, synced int64, key string) []byte {
	b := batchOf([]byte(key), []byte("v-"+key))
	b.setSeq(seq)
	logformat.SetSynced(b.data, synced)
	logformat.SetStamp(b.data, stamp)
	return b.data
}

// logStamp returns the stamp of the log a log file holds: the low 32 bits
// of the identity its first record carries.
func logStamp(t *testing.T, data []byte) uint32 {
	t.Helper()
	recs := readRecords(t, data)
	require.NotEmpty(t, recs)
	_, id, ok := logformat.DecodeIdentity(recs[0])
	require.True(t, ok, "the log starts with its identity")
	return uint32(id)
}

// logFile returns a log file as logFiles.create writes it, with identity id,
// then records.
func logFile(t *testing.T, num, id uint64, records ...[]byte) []byte {
	return recordFile(t, append([][]byte{logformat.EncodeIdentity(num, id)}, records...)...)
}

// recycledLogDB returns a database as a power loss left it, whose active
// log is a recycled file: its own records (every write synced), then
// records of the file's earlier use. It returns the filesystem, the
// acknowledged writes, the active log's number and the offset where its
// own records end.
func recycledLogDB(t *testing.T) (*vfs.MemFS, model, uint64, int64) {
	t.Helper()
	live := vfs.NewMem()
	opts := testOptions(live)
	opts.DisableAutoCompaction = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 100)
	require.NoError(t, db.Flush()) // its log is kept for reuse
	maps.Copy(acked, putAcked(t, db, 100, 110))
	require.NoError(t, db.Flush()) // the rotation reuses it
	maps.Copy(acked, putAcked(t, db, 110, 120))
	require.EqualValues(t, 1, db.Stats().LogsRecycled)
	db.mu.Lock()
	active := db.mu.memstores.active().logNum
	db.mu.Unlock()
	crashed := live.CrashClone(vfs.CrashOptions{})
	require.NoError(t, db.Close())

	data := readDirFiles(t, crashed, "/db")[filepath.Base(filenames.LogPath("/db", active))]
	end, stale := scanLog(t, data)
	require.Positive(t, stale, "the earlier use's records follow the log's own")
	return crashed, acked, active, end
}

// scanLog returns where a log's own records end in its file, at damage or
// at a record of another log, and how many valid records of other logs the
// file holds.
func scanLog(t *testing.T, data []byte) (end int64, stale int) {
	t.Helper()
	stamp := logStamp(t, data)
	fsys := writeDirFiles(t, "/r", map[string][]byte{"log": data})
	r, err := recordio.Open("/r/log", &recordio.ReaderOptions{FS: fsys, NoMmap: true})
	require.NoError(t, err)
	defer r.Close()
	end = -1
	ended := func(at int64) {
		if end < 0 {
			end = at
		}
	}
	for {
		rec, err := r.Next()
		switch {
		case err == io.EOF:
			ended(int64(len(data)))
			return end, stale
		case err != nil:
			ended(damageOffset(err, 0))
			if _, err := r.Resync(); err == io.EOF {
				return end, stale
			}
		case r.Offset() == recordio.FileHeaderSize: // the identity
		default:
			if logformat.Stamp(logformat.Current, rec) != stamp {
				ended(r.Offset())
				stale++
			}
		}
	}
}

// A recycled log replays its own records and none of its file's earlier
// use, whose synced lengths vouch for nothing, however the power loss
// mixed them.
func TestRecycledLogReplaysOnlyItsOwnRecords(t *testing.T) {
	const huge = 1 << 40 // a synced length past any end
	tests := []struct {
		name string
		// tail returns what follows the log's own records, which end at
		// end; stamp is the log's.
		tail    func(t *testing.T, stamp uint32, end int64) []byte
		late    bool // tail holds the log's own record "late", which must be dropped
		corrupt string
	}{
		{name: "the earlier use's records, as the crash left them"},
		{name: "stale records claiming a huge synced length", tail: func(t *testing.T, stamp uint32, end int64) []byte {
			return framed(t, logRecord(stamp-1, 1<<41, huge, "stale1"), logRecord(stamp+1, 1<<41+1, huge, "stale2"))
		}},
		{name: "damage, then stale records claiming a huge synced length", tail: func(t *testing.T, stamp uint32, end int64) []byte {
			return append([]byte("#damage!"), framed(t, logRecord(stamp-1, 1<<41, huge, "stale"))...)
		}},
		{name: "a stale record, then one of the log's own, unsynced", late: true, tail: func(t *testing.T, stamp uint32, end int64) []byte {
			return framed(t, logRecord(stamp-1, 1<<41, huge, "stale"), logRecord(stamp, 1<<42, end, "late"))
		}},
		{name: "a stale record, then one of the log's own vouching past it", corrupt: "durable up to", tail: func(t *testing.T, stamp uint32, end int64) []byte {
			return framed(t, logRecord(stamp-1, 1<<41, huge, "stale"), logRecord(stamp, 1<<42, end+1, "late"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, acked, num, end := recycledLogDB(t)
			path := filenames.LogPath("/db", num)
			if tt.tail != nil {
				data := readDirFiles(t, fsys, "/db")[filepath.Base(path)]
				rewriteFile(t, fsys, path, append(data[:end:end], tt.tail(t, logStamp(t, data), end)...))
			}
			opts := testOptions(fsys)
			db, err := Open("/db", opts)
			if tt.corrupt != "" {
				require.ErrorIs(t, err, ErrCorruption)
				require.Contains(t, err.Error(), filepath.Base(path))
				require.Contains(t, err.Error(), tt.corrupt)
				return
			}
			require.NoError(t, err)
			defer db.Close()
			require.Equal(t, acked, readAll(t, db), "the log's own records, and nothing else")
		})
	}
}

// A record of another log inside a closed log's recorded length is
// corruption, named by file and offset: the manifest says the log's own
// records fill it.
func TestStaleRecordInsideRecordedLengthIsCorruption(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem)
	db, err := Open("/db", opts)
	require.NoError(t, err)
	putAcked(t, db, 0, 20)
	db.mu.Lock()
	num := db.mu.memstores.active().logNum
	db.mu.Unlock()
	require.NoError(t, db.Close()) // records the log's length

	path := filenames.LogPath("/db", num)
	data := readDirFiles(t, mem, "/db")[filepath.Base(path)]
	recs := readRecords(t, data)
	require.Len(t, recs, 21, "the identity, then 20 batches")
	second := recordio.FileHeaderSize + int64(len(framed(t, recs[0], recs[1])))
	logformat.SetStamp(recs[2], logStamp(t, data)+1) // the same record, of another log: as long
	rewriteFile(t, mem, path, append(data[:recordio.FileHeaderSize:recordio.FileHeaderSize], framed(t, recs...)...))
	before := readDirFiles(t, mem, "/db")

	_, err = Open("/db", opts)
	require.ErrorIs(t, err, ErrCorruption)
	require.ErrorIs(t, err, errStaleRecord)
	require.Contains(t, err.Error(), fmt.Sprintf("%s: offset %d", path, second))
	require.Equal(t, before, readDirFiles(t, mem, "/db"), "a refused Open changes nothing")
}

// A log file renamed for reuse by a rotation the power loss interrupted
// before the manifest recorded it holds only the earlier use's records: it
// opens as an empty log, neither data nor damage.
func TestRecycledLogRenamedButUnrecorded(t *testing.T) {
	live := vfs.NewMem()
	opts := testOptions(live)
	opts.DisableAutoCompaction = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 100)
	db.mu.Lock()
	retired := db.mu.memstores.active().logNum
	db.mu.Unlock()
	require.NoError(t, db.Flush())
	maps.Copy(acked, putAcked(t, db, 100, 110))
	crashed := live.CrashClone(vfs.CrashOptions{})
	require.NoError(t, db.Close())

	// As the rotation leaves it once the rename and its directory are
	// durable and the new header written over the old one.
	db.mu.Lock()
	next := db.mu.versions.nextFile()
	db.mu.Unlock()
	f, err := crashed.ReuseForWrite(filenames.LogPath("/db", retired), filenames.LogPath("/db", next))
	require.NoError(t, err)
	w, err := recordio.NewWriter(f, logWriterOptions)
	require.NoError(t, err)
	_, err = w.Write(logformat.EncodeIdentity(next, base.NewFileID(0)))
	require.NoError(t, err)
	require.NoError(t, w.Sync())
	require.NoError(t, crashed.SyncDir("/db"))

	opts.FS = crashed
	db, err = Open("/db", opts)
	require.NoError(t, err)
	require.Equal(t, acked, readAll(t, db))
	require.NoError(t, db.Close())
}

// Recycling is on by default and off with a negative RecycledLogs: logs
// then go when their memstore is flushed.
func TestRecycledLogsOption(t *testing.T) {
	for _, tc := range []struct {
		recycled int
		want     int64
	}{{0, 4}, {1, 4}, {-1, 0}} {
		t.Run(fmt.Sprint(tc.recycled), func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			opts.RecycledLogs = tc.recycled
			db, err := Open("/db", opts)
			require.NoError(t, err)
			defer db.Close()
			for i := range 5 {
				putAcked(t, db, i*10, i*10+10)
				require.NoError(t, db.Flush())
			}
			require.Equal(t, tc.want, db.Stats().LogsRecycled, "rotations after the first flush reuse a log")
		})
	}
}

// A database in an older log format opens: its logs replay in their
// format, and an Open interrupted anywhere leaves one the next Open
// recovers, so that no old log is ever read in the new format.
func TestOldLogFormatsUpgrade(t *testing.T) {
	for _, format := range []uint64{logformat.V1, logformat.WithSynced} {
		t.Run(fmt.Sprint(format), func(t *testing.T) {
			base, acked := oldFormatDB(t, format)
			opts := testOptions(base.CrashClone(vfs.CrashOptions{}))
			db, err := Open("/db", opts)
			require.NoError(t, err)
			require.Equal(t, acked, readAll(t, db))
			require.NoError(t, db.Close())

			crashAtEveryStep(t, base, acked, func(fsys vfs.FS, arm func()) (*DB, error) {
				arm()
				opts := testOptions(fsys)
				opts.DisableAutoCompaction = true
				return Open("/db", opts)
			})
		})
	}
}

// oldFormatDB returns a database as a session in an older log format left
// it: a manifest and two logs of that format, and the writes they hold.
func oldFormatDB(t *testing.T, format uint64) (*vfs.MemFS, model) {
	t.Helper()
	header := map[uint64]int{logformat.V1: logformat.HeaderSizeV1, logformat.WithSynced: logformat.HeaderSizeSynced}[format]
	acked := model{}
	files := map[string][]byte{}
	seq := uint64(1)
	for _, num := range []uint64{2, 3} {
		var recs [][]byte
		for i := range 30 {
			k := fmt.Sprintf("log%d-key%02d", num, i)
			b := batchOf([]byte(k), []byte("v-"+k))
			b.setSeq(seq)
			seq++
			// The old header, then the ops.
			recs = append(recs, append(bytes.Clone(b.data[:header]), b.data[logformat.HeaderSize:]...))
			acked[k] = "v-" + k
		}
		files[filepath.Base(filenames.LogPath("/db", num))] = recordFile(t, recs...)
	}
	edit := manifest.Edit{Comparator: sstables.Bytewise.Name, LogNum: 2, NextFileNum: 4}
	if format != logformat.V1 { // V1 manifests predate the field
		edit.LogFormat = format
	}
	files[filepath.Base(filenames.ManifestPath("/db", 1))] = recordFile(t, edit.Encode())
	fsys := writeDirFiles(t, "/db", files)
	require.NoError(t, fsys.SyncDir("/"))
	require.NoError(t, manifest.WriteCurrent(fsys, "/db", filepath.Base(filenames.ManifestPath("/db", 1))))
	return fsys, acked
}
