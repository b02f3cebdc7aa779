package manifest

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// The golden files under testdata are the manifest's formats as a database
// directory holds them: an edit of every shape (edit_*.bin, together every
// field tag and both forms of the fields that grew an identity), a manifest
// of the edits a database's life writes (MANIFEST-000002) and the CURRENT
// that names it. A change to the encoding shows as a change to a file.
// Regenerate them, once such a change is meant, with:
//
//	go test ./internal/manifest -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const (
	goldenManifest   = "MANIFEST-000002"
	goldenComparator = "strata.bytewise"
)

// Tables and logs of the golden edits.
var (
	table3 = TableInfo{Num: 3, Size: 2 << 20, Smallest: []byte("a"), Largest: []byte("zz"),
		SmallestSeq: 1, LargestSeq: 40, ID: 0x8000_0000_0000_0003}
	table5 = TableInfo{Num: 5, Size: 70_000, Smallest: []byte("apple"), Largest: []byte("pear"),
		SmallestSeq: 41, LargestSeq: 100, ID: 0x8000_0000_0000_0005}
	table8 = TableInfo{Num: 8, Size: 4096, Smallest: []byte("fig"), Largest: []byte("kiwi"),
		SmallestSeq: 101, LargestSeq: 250, ID: 0xffff_ffff_ffff_ffff}
	table9 = TableInfo{Num: 9, Size: 74_000, Smallest: []byte("n"), Largest: []byte("zebra"),
		SmallestSeq: 41, LargestSeq: 250, ID: 0x8000_0000_0000_0009}
	// table10 holds range tombstones only, the first unbounded below: its
	// smallest key is empty, not absent.
	table10 = TableInfo{Num: 10, Size: 900, Smallest: []byte{}, Largest: []byte("m"),
		SmallestSeq: 120, LargestSeq: 130, ID: 0x8000_0000_0000_000a}
	log4ID = uint64(0x8000_0000_0000_0004)
	log7ID = uint64(0x8000_0000_0000_0007)
)

// goldenEdits are the golden edits; those inManifest are, in order, the
// golden manifest's.
var goldenEdits = []struct {
	file       string
	inManifest bool
	want       Edit
}{
	{"edit_open.bin", true, Edit{ // a new manifest's first: the whole version
		Comparator: goldenComparator, Merger: "strata.uint64add",
		LogNum: 4, NextFileNum: 6, LastSeq: 100, LogFormat: logformat.Merge,
		Added: []LevelTable{{0, table5}, {6, table3}},
		Logs:  []LogInfo{{Num: 4, ID: log4ID}},
	}},
	{"edit_rotation.bin", true, Edit{ // log 4 closed at its length, log 7 started
		NextFileNum: 8,
		Logs:        []LogInfo{{Num: 4, Size: 8192}, {Num: 7, ID: log7ID}},
	}},
	{"edit_flush.bin", true, Edit{
		LogNum: 7, NextFileNum: 9, LastSeq: 250,
		Added: []LevelTable{{0, table8}},
	}},
	{"edit_compaction.bin", true, Edit{
		NextFileNum: 11,
		Deleted:     []LevelTable{{0, TableInfo{Num: 5}}, {0, TableInfo{Num: 8}}},
		Added:       []LevelTable{{1, table10}, {1, table9}},
	}},
	{"edit_move.bin", true, Edit{ // a trivial move: the same table, a level down
		NextFileNum: 11,
		Deleted:     []LevelTable{{1, TableInfo{Num: 9}}},
		Added:       []LevelTable{{2, table9}},
	}},
	{"edit_close.bin", true, Edit{
		NextFileNum: 11,
		Logs:        []LogInfo{{Num: 7, Size: 16384}},
	}},
	{"edit_blob_flush.bin", false, Edit{ // log format 7: a table whose values lie in a blob file written beside it
		LogNum: 12, NextFileNum: 14, LastSeq: 300, LogFormat: logformat.BlobFiles,
		Added: []LevelTable{{0, TableInfo{Num: 13, Size: 3000, Smallest: []byte("doc/1"), Largest: []byte("doc/9"),
			SmallestSeq: 251, LargestSeq: 300, ID: 0x8000_0000_0000_000d,
			BlobRefs: []BlobRef{{Num: 12, Values: 50, ValueBytes: 204_800}}}}},
		AddedBlobs: []BlobFileInfo{{Num: 12, Size: 205_700, Values: 50, ValueBytes: 204_800, ID: 0x8000_0000_0000_000c}},
	}},
	{"edit_blob_compaction.bin", false, Edit{ // a compaction that drops the last reference to blob file 12
		NextFileNum: 16,
		Deleted:     []LevelTable{{0, TableInfo{Num: 13}}},
		Added: []LevelTable{{1, TableInfo{Num: 15, Size: 2000, Smallest: []byte("doc/1"), Largest: []byte("doc/8"),
			SmallestSeq: 251, LargestSeq: 299, ID: 0x8000_0000_0000_000f,
			BlobRefs: []BlobRef{{Num: 14, Values: 40, ValueBytes: 163_840}, {Num: 16, Values: 1, ValueBytes: 4096}}}}},
		DeletedBlobs: []uint64{12},
	}},
	{"edit_before_identities.bin", false, Edit{ // as log format 4 wrote it: no identities, no merger
		Comparator: goldenComparator,
		LogNum:     2, NextFileNum: 4, LastSeq: 9, LogFormat: logformat.RangeDel,
		Added: []LevelTable{{0, TableInfo{Num: 3, Size: 512, Smallest: []byte("k"), Largest: []byte("k"),
			SmallestSeq: 1, LargestSeq: 9}}},
		Logs: []LogInfo{{Num: 2}},
	}},
}

func TestGoldenEdits(t *testing.T) {
	for _, tt := range goldenEdits {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			if *update {
				require.NoError(t, os.WriteFile(path, tt.want.Encode(), 0o644))
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err, "missing golden file; run with -update")
			got, err := DecodeEdit(data)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, data, got.Encode(), "re-encoded")
		})
	}
}

// writeManifest writes a manifest of edits at path, as a database does.
func writeManifest(t *testing.T, path string, edits []Edit) {
	w, err := recordio.Create(path, FileOptions(vfs.Default))
	require.NoError(t, err)
	for _, e := range edits {
		_, err := w.Write(e.Encode())
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
}

// The golden manifest decodes to its edits, encodes back to its bytes, and
// replays to the state they make: the tables each level holds after the
// flush, compaction and move, the logs still needed, their identities kept
// from the edits that started them.
func TestGoldenManifest(t *testing.T) {
	var want []Edit
	for _, tt := range goldenEdits {
		if tt.inManifest {
			want = append(want, tt.want)
		}
	}
	path := filepath.Join("testdata", goldenManifest)
	if *update {
		writeManifest(t, path, want)
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run with -update")

	r, err := recordio.Open(path, &recordio.ReaderOptions{NoMmap: true})
	require.NoError(t, err)
	defer r.Close()
	var got []Edit
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		e, err := DecodeEdit(rec)
		require.NoError(t, err)
		got = append(got, e)
	}
	require.Equal(t, want, got)
	again := filepath.Join(t.TempDir(), goldenManifest)
	writeManifest(t, again, got)
	reencoded, err := os.ReadFile(again)
	require.NoError(t, err)
	require.Equal(t, data, reencoded, "re-encoded")

	state, err := Replay(vfs.Default, path, goldenComparator)
	require.NoError(t, err)
	require.Equal(t, &State{
		Comparator: goldenComparator,
		Merger:     "strata.uint64add",
		Levels: [NumLevels]map[uint64]TableInfo{
			0: {},
			1: {10: table10},
			2: {9: table9},
			6: {3: table3},
		},
		LogNum: 7, NextFileNum: 11, LastSeq: 250,
		LogFormat: logformat.Merge,
		Logs:      map[uint64]LogInfo{7: {Num: 7, Size: 16384, ID: log7ID}},
		BlobFiles: map[uint64]BlobFileInfo{},
	}, state)
}

// The blob edits apply in turn: the flush adds its table and blob file,
// the compaction replaces the table and deletes the blob file; deleting
// one the version does not hold is a bad edit.
func TestBlobEdits(t *testing.T) {
	s := &State{Comparator: goldenComparator}
	for _, tt := range goldenEdits {
		if strings.HasPrefix(tt.file, "edit_blob_") {
			e := tt.want
			require.NoError(t, s.Apply(&e), tt.file)
		}
	}
	require.Empty(t, s.BlobFiles)
	require.Equal(t, []BlobRef{{Num: 14, Values: 40, ValueBytes: 163_840}, {Num: 16, Values: 1, ValueBytes: 4096}}, s.Levels[1][15].BlobRefs)
	require.Empty(t, s.Levels[0])
	require.ErrorIs(t, s.Apply(&Edit{DeletedBlobs: []uint64{12}}), ErrBadEdit)
}

// The golden CURRENT names the golden manifest, and is what WriteCurrent
// writes for it.
func TestGoldenCurrent(t *testing.T) {
	if *update {
		require.NoError(t, WriteCurrent(vfs.Default, "testdata", goldenManifest))
	}
	data, err := os.ReadFile(filepath.Join("testdata", "CURRENT"))
	require.NoError(t, err, "missing golden file; run with -update")
	name, err := ReadCurrent(vfs.Default, "testdata")
	require.NoError(t, err)
	require.Equal(t, goldenManifest, name)

	dir := t.TempDir()
	require.NoError(t, WriteCurrent(vfs.Default, dir, name))
	reencoded, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	require.NoError(t, err)
	require.Equal(t, data, reencoded, "re-encoded")
}
