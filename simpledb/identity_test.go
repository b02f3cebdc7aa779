package simpledb

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// foreignTable returns a table of the same size as the table data, and of
// the same entries, but of another identity: what a table restored from
// another database or an older backup looks like to every checksum.
// wopts are the options the table was written with.
func foreignTable(t *testing.T, data []byte, wopts *sstables.WriterOptions, rng *rand.Rand) []byte {
	t.Helper()
	fsys := writeDirFiles(t, "/t", map[string][]byte{"in.sst": data})
	r, err := sstables.Open("/t/in.sst", &sstables.ReaderOptions{FS: fsys, NoMmap: true})
	require.NoError(t, err)
	defer r.Close()
	for range 100 {
		o := *wopts
		o.FS, o.ID = fsys, rng.Uint64()|1<<63 // as many uvarint bytes as most identities
		out := rewriteTable(t, fsys, r, &o)
		if len(out) == len(data) && r.Metadata().ID != o.ID {
			return out
		}
	}
	t.Fatal("no table of another identity came out the same size")
	return nil
}

// foreignBlob returns a blob file of the same number, values and size as
// data, but of another identity.
func foreignBlob(t *testing.T, name string, data []byte, rng *rand.Rand) []byte {
	t.Helper()
	fsys := writeDirFiles(t, "/t", map[string][]byte{"in.blob": data})
	_, num := filenames.Parse(name)
	records := readRecords(t, data)
	w, err := sstables.NewBlobWriter("/t/out.blob", num, &sstables.WriterOptions{FS: fsys, ID: rng.Uint64() | 1<<63})
	require.NoError(t, err)
	for _, v := range records[:len(records)-1] { // the last is the trailer
		_, err := w.Add(v)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	out := readDirFiles(t, fsys, "/t")["out.blob"]
	require.Len(t, out, len(data), "the foreign blob file's size")
	return out
}

// rewriteTable writes r's entries and range deletions to a new table with
// wopts, on fsys, and returns its bytes.
func rewriteTable(t *testing.T, fsys vfs.FS, r *sstables.Reader, wopts *sstables.WriterOptions) []byte {
	t.Helper()
	w, err := sstables.NewWriter("/t/out.sst", wopts)
	require.NoError(t, err)
	for _, f := range r.RangeDeletions() {
		for _, seq := range f.Seqs {
			require.NoError(t, w.AddRangeDel(f.Start, f.End, seq))
		}
	}
	it := r.NewIterator(nil)
	for ok := it.First(); ok; ok = it.Next() {
		if h, ok := it.BlobHandle(); ok {
			require.NoError(t, w.AddBlobRef(it.Key(), it.Seq(), h))
			continue
		}
		require.NoError(t, w.AddEntry(it.Key(), it.Seq(), it.Kind(), it.Value()))
	}
	require.NoError(t, it.Err())
	require.NoError(t, it.Close())
	require.NoError(t, w.Close())
	return readDirFiles(t, fsys, "/t")["out.sst"]
}

// twinDatabases writes two databases the same way, but for the byte of
// their values ('A' and 'B'), uncompressed, so that their files have the
// same names and sizes: two tables flushed, then writes left in the log,
// closed. It returns both directories' files.
func twinDatabases(t *testing.T) (a, b map[string][]byte) {
	t.Helper()
	build := func(fill byte) map[string][]byte {
		mem := vfs.NewMem()
		opts := testOptions(mem)
		opts.DisableAutoCompaction = true
		opts.Compression = sstables.NoCompression
		db, err := Open("/db", opts)
		require.NoError(t, err)
		for round := range 3 {
			for i := range 50 {
				require.NoError(t, db.Put(fmt.Appendf(nil, "key%d-%03d", round, i), bytes.Repeat([]byte{fill}, 100), DefaultSync))
			}
			if round < 2 {
				require.NoError(t, db.Flush())
			}
		}
		require.NoError(t, db.Close())
		files := readDirFiles(t, mem, "/db")
		delete(files, filenames.LockName)
		return files
	}
	a, b = build('A'), build('B')
	for name, data := range a {
		require.Len(t, b[name], len(data), "%s: the same size in both", name)
	}
	return a, b
}

// A table or log of another database with the name and size the manifest
// records is refused, by Open and by Verify, naming the file: every
// checksum in it holds, and only its identity tells. So is one replaced
// while the database is open, when the table cache reopens it or a
// checkpoint links it.
func TestForeignFilesRefused(t *testing.T) {
	a, b := twinDatabases(t)
	var tables, logs []string
	for name := range a {
		switch kind, _ := filenames.Parse(name); kind {
		case filenames.Table:
			tables = append(tables, name)
		case filenames.Log:
			logs = append(logs, name)
		}
	}
	require.Len(t, tables, 2)
	require.Len(t, logs, 1, "the log of the last writes")
	for _, name := range append(tables, logs...) {
		t.Run(name, func(t *testing.T) {
			files := map[string][]byte{}
			for n, data := range a {
				files[n] = data
			}
			files[name] = b[name]
			fsys := writeDirFiles(t, "/db", files)
			opts := testOptions(fsys)
			report, err := Verify("/db", opts, nil)
			require.NoError(t, err)
			require.Len(t, report.Damage, 1)
			require.ErrorIs(t, report.Damage[0], ErrCorruption)
			require.ErrorContains(t, report.Damage[0], name)
			require.ErrorContains(t, report.Damage[0], "another database")

			_, err = Open("/db", opts)
			require.ErrorIs(t, err, ErrCorruption)
			require.ErrorContains(t, err, name)
			require.ErrorContains(t, err, "another database")
			require.Equal(t, files, readDirFiles(t, fsys, "/db"), "a refused Open changes nothing")
		})
	}

	t.Run("replaced while open", func(t *testing.T) {
		fsys := writeDirFiles(t, "/db", a)
		opts := testOptions(fsys)
		opts.DisableAutoCompaction = true // the test reads the version's tables without the lock
		db, err := Open("/db", opts)
		require.NoError(t, err)
		defer db.Close()
		var victim *table // one of the twin's tables: not the one Open wrote from the log
		for _, tb := range db.mu.versions.current().levels[0] {
			if b[filepath.Base(filenames.TablePath("/db", tb.Num))] != nil {
				victim = tb
			}
		}
		require.NotNil(t, victim)
		path := filenames.TablePath("/db", victim.Num)
		rewriteFile(t, fsys, path, b[filepath.Base(path)])

		err = db.Checkpoint("/backup")
		require.ErrorIs(t, err, ErrCorruption, "the checkpoint would link the other table")
		require.ErrorContains(t, err, filepath.Base(path))
		require.ErrorContains(t, err, "another database")
		_, err = fsys.Stat("/backup")
		require.Error(t, err, "a failed checkpoint leaves nothing")

		setTableCacheCapacity(db, 0) // the table's file is closed: the next read reopens it
		_, err = db.Get(victim.Smallest)
		require.ErrorIs(t, err, ErrCorruption)
		require.ErrorContains(t, err, path)
		require.ErrorContains(t, err, "another database")
	})
}

// A database written before identities (log format 4; tables without one)
// opens and reads as before, and the tables it writes from then on have
// identities. A table with an identity where the manifest records none is
// refused: it is not the table that manifest named.
func TestTablesWithoutIdentity(t *testing.T) {
	files, acked := legacyTablesDB(t, 0)
	fsys := writeDirFiles(t, "/db", files)
	opts := testOptions(fsys)
	opts.DisableAutoCompaction = true
	report, err := Verify("/db", opts, nil)
	require.NoError(t, err)
	require.Empty(t, report.Damage)
	db, err := Open("/db", opts)
	require.NoError(t, err)
	require.Equal(t, acked, readAll(t, db))
	require.NoError(t, db.Put([]byte("new"), []byte("write"), DefaultSync))
	require.NoError(t, db.Compact())
	for _, tb := range db.mu.versions.current().levels[1] {
		require.NotZero(t, tb.ID, "a table written now has an identity")
	}
	require.NoError(t, db.Close())

	// The legacy database with a table that has an identity where the
	// manifest records none.
	files, _ = legacyTablesDB(t, 42)
	fsys = writeDirFiles(t, "/db", files)
	opts.FS = fsys
	report, err = Verify("/db", opts, nil)
	require.NoError(t, err)
	require.Len(t, report.Damage, 1)
	_, err = Open("/db", opts)
	require.ErrorIs(t, err, ErrCorruption)
	require.ErrorContains(t, err, "identity")
	require.ErrorContains(t, err, ".sst")
}

// legacyTablesDB returns a database as a build before identities left it:
// a manifest of log format 4 naming two L0 tables without identities, and
// no log; and the writes it holds. The first table's file has identity
// firstID all the same, if that is not 0.
func legacyTablesDB(t *testing.T, firstID uint64) (map[string][]byte, model) {
	t.Helper()
	mem := vfs.NewMem()
	opts := testOptions(mem)
	opts.DisableAutoCompaction = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	acked := putAcked(t, db, 0, 50)
	require.NoError(t, db.Flush())
	for k, v := range putAcked(t, db, 50, 100) {
		acked[k] = v
	}
	require.NoError(t, db.Flush())
	edit := manifest.Edit{Comparator: sstables.Bytewise.Name, LogFormat: logformat.RangeDel, LastSeq: db.commits.log.lastSeq}
	files := map[string][]byte{}
	for i, tb := range db.mu.versions.current().levels[0] {
		name := filepath.Base(filenames.TablePath("/db", tb.Num))
		id := uint64(0)
		if i == 0 {
			id = firstID
		}
		data := withTableID(t, readDirFiles(t, mem, "/db")[name], id)
		info := tb.TableInfo
		info.ID, info.Size = 0, uint64(len(data))
		edit.Added = append(edit.Added, manifest.LevelTable{Level: 0, Info: info})
		files[name] = data
	}
	edit.NextFileNum = db.mu.versions.nextFile()
	require.NoError(t, db.Close())
	files[filepath.Base(filenames.ManifestPath("/db", 1))] = recordFile(t, edit.Encode())
	var current recordSink
	w, err := recordio.NewWriter(&current, manifest.FileOptions(nil))
	require.NoError(t, err)
	_, err = w.Write([]byte(filepath.Base(filenames.ManifestPath("/db", 1))))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	files[filenames.CurrentName] = current.Bytes()
	return files, acked
}

// withTableID returns the table data rewritten with identity id (0: none).
func withTableID(t *testing.T, data []byte, id uint64) []byte {
	t.Helper()
	fsys := writeDirFiles(t, "/t", map[string][]byte{"in.sst": data})
	r, err := sstables.Open("/t/in.sst", &sstables.ReaderOptions{FS: fsys, NoMmap: true})
	require.NoError(t, err)
	defer r.Close()
	wopts := smallOptions().tableWriterOptions()
	wopts.FS, wopts.ID = fsys, id
	return rewriteTable(t, fsys, r, wopts)
}
