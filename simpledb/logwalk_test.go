package simpledb

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// walkImage is a database directory whose active log holds n synced
// batches of one put each, key0000 to key(n-1), 100-byte values: closed
// (Close recorded the log's length) or as a power loss left it (no length
// recorded).
type walkImage struct {
	files  map[string][]byte
	log    string   // the active log's file name
	bounds []int64  // where its batches start
	keys   []string // the key of each batch
}

func newWalkImage(t *testing.T, closed bool, n int) *walkImage {
	t.Helper()
	mem := vfs.NewMem()
	opts := testOptions(mem)
	opts.DisableAutoCompaction = true
	db, err := Open("/db", opts)
	require.NoError(t, err)
	img := &walkImage{}
	for i := range n {
		k := fmt.Sprintf("key%04d", i)
		require.NoError(t, db.Put([]byte(k), bytes.Repeat([]byte{'v'}, 100), DefaultSync))
		img.keys = append(img.keys, k)
	}
	db.mu.Lock()
	img.log = filepath.Base(filenames.LogPath("/db", db.mu.memstores.active().logNum))
	require.Zero(t, db.mu.memstores.immutable())
	db.mu.Unlock()
	var fsys vfs.FS = mem.CrashClone(vfs.CrashOptions{})
	if closed {
		fsys = mem
	}
	require.NoError(t, db.Close())
	img.files = readDirFiles(t, fsys, "/db")
	delete(img.files, filenames.LockName)
	img.bounds = recordBoundaries(t, img.files[img.log])[1:] // after the identity
	require.Len(t, img.bounds, n)
	return img
}

// withLog returns the image's files with the active log replaced.
func (img *walkImage) withLog(data []byte) map[string][]byte {
	files := maps.Clone(img.files)
	files[img.log] = data
	return files
}

// reframe returns the active log with its records rewritten by change
// (given each record and its index, the identity being record 0), framed
// anew so that every checksum holds.
func (img *walkImage) reframe(t *testing.T, change func(i int, rec []byte) []byte) []byte {
	t.Helper()
	var recs [][]byte
	for i, rec := range readRecords(t, img.files[img.log]) {
		recs = append(recs, change(i, bytes.Clone(rec)))
	}
	return recordFile(t, recs...)
}

// The rules by which a log is walked (see logWalk) hold alike for replay,
// which opens the database, and for Verify: one table of cases, each run
// through both. Open must refuse exactly what Verify reports as damage,
// naming the file, leaving the directory as it was; and where it opens,
// it must hold the batches the case keeps, and Verify must note a torn
// tail exactly where Open drops one.
func TestLogWalkCases(t *testing.T) {
	const n = 60
	closed, crashed := newWalkImage(t, true, n), newWalkImage(t, false, n)
	// stamped re-stamps a log's batches from `from` on with another log's
	// stamp.
	restamp := func(img *walkImage, from int) []byte {
		return img.reframe(t, func(i int, rec []byte) []byte {
			if i > from {
				logformat.SetStamp(rec, logformat.Stamp(logformat.Current, rec)+1)
			}
			return rec
		})
	}
	identity := func(img *walkImage, num, id uint64) []byte {
		return img.reframe(t, func(i int, rec []byte) []byte {
			if i == 0 {
				gotNum, gotID, _ := logformat.DecodeIdentity(rec)
				return logformat.EncodeIdentity(gotNum+num, gotID+id)
			}
			return rec
		})
	}
	vouching := func(img *walkImage, synced int64) []byte {
		// The log's own record, after damage, saying the log was durable
		// up to synced.
		data := img.files[img.log]
		b := batchOf([]byte("late"), []byte("write"))
		b.setSeq(1 << 40)
		logformat.SetSynced(b.data, synced)
		logformat.SetStamp(b.data, logStamp(t, data))
		end := img.bounds[n-1]
		return slices.Concat(data[:end], []byte("#damage#"), framed(t, b.data))
	}
	tests := []struct {
		name  string
		img   *walkImage
		data  func(img *walkImage) []byte
		keep  int    // batches Open holds; -1: Open refuses
		error string // what the refusal says
		torn  bool   // Open drops a torn tail, Verify notes it
	}{
		{name: "closed, whole", img: closed, data: func(img *walkImage) []byte { return img.files[img.log] }, keep: n},
		{name: "closed, zeros from a record boundary to the end", img: closed, keep: -1, error: "records end here",
			data: func(img *walkImage) []byte {
				data := bytes.Clone(img.files[img.log])
				clear(data[img.bounds[n-30]:])
				return data
			}},
		{name: "closed, zeros from the last record on", img: closed, keep: -1, error: "records end here",
			data: func(img *walkImage) []byte {
				data := bytes.Clone(img.files[img.log])
				clear(data[img.bounds[n-1]:])
				return data
			}},
		{name: "closed, cut at a record boundary", img: closed, keep: -1, error: "the log ends here",
			data: func(img *walkImage) []byte { return img.files[img.log][:img.bounds[n-10]] }},
		{name: "closed, another log's records within its length", img: closed, keep: -1, error: "stamp",
			data: func(img *walkImage) []byte { return restamp(img, n-5) }},
		{name: "closed, bytes past its length", img: closed, keep: n,
			data: func(img *walkImage) []byte { return append(bytes.Clone(img.files[img.log]), "past the end"...) }},
		{name: "closed, another identity", img: closed, keep: -1, error: "manifest recorded",
			data: func(img *walkImage) []byte { return identity(img, 0, 1) }},
		{name: "closed, identity of another number", img: closed, keep: -1, error: "another log's",
			data: func(img *walkImage) []byte { return identity(img, 1, 0) }},
		{name: "closed, identity damaged", img: closed, keep: -1, error: "identity",
			data: func(img *walkImage) []byte {
				data := bytes.Clone(img.files[img.log])
				data[recordio.FileHeaderSize+12] ^= 0xff
				return data
			}},
		{name: "crashed, whole", img: crashed, data: func(img *walkImage) []byte { return img.files[img.log] }, keep: n},
		{name: "crashed, last record cut", img: crashed, keep: n - 1, torn: true,
			data: func(img *walkImage) []byte { return img.files[img.log][:len(img.files[img.log])-3] }},
		{name: "crashed, zeros from a record boundary", img: crashed, keep: n - 5,
			data: func(img *walkImage) []byte {
				data := bytes.Clone(img.files[img.log])
				clear(data[img.bounds[n-5]:])
				return data
			}},
		{name: "crashed, another log's records at the end", img: crashed, keep: n - 5, torn: true,
			data: func(img *walkImage) []byte { return restamp(img, n-5) }},
		{name: "crashed, damage, then a record vouching for it", img: crashed, keep: -1, error: "durable up to",
			data: func(img *walkImage) []byte { return vouching(img, crashed.bounds[n-1]+1) }},
		{name: "crashed, damage, then a record that does not vouch", img: crashed, keep: n - 1, torn: true,
			data: func(img *walkImage) []byte { return vouching(img, crashed.bounds[n-1]) }},
		{name: "crashed, another identity", img: crashed, keep: -1, error: "manifest recorded",
			data: func(img *walkImage) []byte { return identity(img, 0, 1) }},
		{name: "crashed, identity damaged", img: crashed, keep: -1, error: "identity",
			data: func(img *walkImage) []byte {
				data := bytes.Clone(img.files[img.log])
				data[recordio.FileHeaderSize+12] ^= 0xff
				return data
			}},
		{name: "crashed, file header gone", img: crashed, keep: -1, error: "file header",
			data: func(img *walkImage) []byte { return make([]byte, len(img.files[img.log])) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := tt.img.withLog(tt.data(tt.img))
			fsys := writeDirFiles(t, "/db", files)
			opts := testOptions(fsys)

			report, err := Verify("/db", opts, nil)
			require.NoError(t, err)
			var damage []string
			for _, d := range report.Damage {
				require.ErrorIs(t, d, ErrCorruption)
				damage = append(damage, d.Error())
			}
			notedTorn := slices.ContainsFunc(report.Notes, func(n string) bool { return strings.Contains(n, "torn tail") })

			db, err := Open("/db", opts)
			if tt.keep < 0 {
				require.ErrorIs(t, err, ErrCorruption)
				require.Contains(t, err.Error(), tt.img.log, "the error names the log")
				require.Contains(t, err.Error(), tt.error)
				require.Equal(t, files, readDirFiles(t, fsys, "/db"), "a refused Open changes nothing")
				require.NotEmpty(t, damage, "Verify reports what Open refuses")
				require.Contains(t, strings.Join(damage, "\n"), tt.img.log)
				return
			}
			require.NoError(t, err)
			defer db.Close()
			require.Empty(t, damage, "Verify reports no damage where Open opens")
			require.Equal(t, tt.torn, notedTorn, "Verify notes a torn tail where Open drops one: %v", report.Notes)
			got := readAll(t, db)
			require.Len(t, got, tt.keep)
			for _, k := range tt.img.keys[:tt.keep] {
				require.Contains(t, got, k)
			}
		})
	}
}

// The case, end to end: 200 synced puts, Close, the log zeroed
// from a record boundary 30 records before its end. Verify reports it,
// Open refuses it, and nothing is flushed or rewritten: the 30
// acknowledged writes are not lost for good.
func TestZeroedLogWithinRecordedLength(t *testing.T) {
	img := newWalkImage(t, true, 200)
	data := bytes.Clone(img.files[img.log])
	clear(data[img.bounds[170]:])
	files := img.withLog(data)
	fsys := writeDirFiles(t, "/db", files)
	opts := testOptions(fsys)
	report, err := Verify("/db", opts, nil)
	require.NoError(t, err)
	require.Len(t, report.Damage, 1)
	require.ErrorIs(t, report.Damage[0], ErrCorruption)
	require.Contains(t, report.Damage[0].Error(), fmt.Sprintf("%s: offset %d", img.log, img.bounds[170]))
	_, err = Open("/db", opts)
	require.ErrorIs(t, err, ErrCorruption)
	require.Equal(t, files, readDirFiles(t, fsys, "/db"), "the directory is as it was")
}

// A value that embeds a well-formed log record (CRC-32C is no secret)
// cannot pass for the log's own record: after a power loss tears the write
// that holds it, the walk past the torn end finds the embedded record,
// whose stamp is not the log's (its identity is random and in no value),
// so it vouches for nothing, and the database opens without the torn
// write, as it must.
func TestEmbeddedRecordCannotVouch(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem)
	db, err := Open("/db", opts)
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("synced"), []byte("v"), DefaultSync))
	db.mu.Lock()
	num := db.mu.memstores.active().logNum
	db.mu.Unlock()
	// The stamp a log's records carried before identities, and a synced
	// length past any end.
	forged := framed(t, logRecord(uint32(num), 1<<40, 1<<40, "forged"))
	value := slices.Concat(bytes.Repeat([]byte{'x'}, 64), forged, bytes.Repeat([]byte{'y'}, 64))
	require.NoError(t, db.Put([]byte("crafted"), value, NoSync))
	files := readDirFiles(t, mem, "/db") // the unsynced write's bytes too, as the page cache held them
	require.NoError(t, db.Close())
	delete(files, filenames.LockName)

	// The power loss kept the crafted write up to the end of the embedded
	// record, not its last bytes.
	name := filepath.Base(filenames.LogPath("/db", num))
	log := files[name]
	at := bytes.Index(log, forged)
	require.Positive(t, at)
	files[name] = log[:at+len(forged)+10]
	fsys := writeDirFiles(t, "/db", files)
	opts.FS = fsys
	report, err := Verify("/db", opts, nil)
	require.NoError(t, err)
	require.Empty(t, report.Damage)
	db, err = Open("/db", opts)
	require.NoError(t, err, "the torn write is dropped, not taken for damage")
	defer db.Close()
	require.Equal(t, model{"synced": "v"}, readAll(t, db))
}
