package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stratadb/strata/simpledb"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"strata": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the scripts in testdata/script: each builds databases
// and files with the commands below, damages copies of them, and checks
// strata's output and exit status.
func TestScripts(t *testing.T) {
	golden, err := filepath.Abs("../../recordio/testdata/gosstables")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("GOLDEN", golden)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkdb":     cmdMkdb,
			"mkcounts": cmdMkcounts,
			"fill":     cmdFill,
			"flipbyte": cmdFlipByte,
			"truncate": cmdTruncate,
			"lockdb":   cmdLockDB,
			"cpdir":    cmdCpDir,
		},
	})
}

// mkdb DIR N: a database of N keys, key000000 to key(N-1), whose first
// half is in tables in two levels and the rest in the log; key000001 is
// deleted, and [key000010, key000020) deleted by one range deletion.
func cmdMkdb(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkdb DIR N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	db, err := simpledb.Open(ts.MkAbs(args[0]), &simpledb.Options{DisableAutoCompaction: true})
	ts.Check(err)
	put := func(from, to int) {
		b := db.NewBatch()
		for i := from; i < to; i++ {
			ts.Check(b.Put(fmt.Appendf(nil, "key%06d", i), fmt.Appendf(nil, "value%d", i)))
		}
		ts.Check(db.Write(b, simpledb.DefaultSync))
	}
	put(0, n/4)
	ts.Check(db.Compact())
	put(n/4, n/2)
	ts.Check(db.Flush())
	put(n/2, n)
	ts.Check(db.Delete([]byte("key000001"), simpledb.DefaultSync))
	ts.Check(db.DeleteRange([]byte("key000010"), []byte("key000020"), simpledb.DefaultSync))
	ts.Check(db.Close())
}

// mkcounts DIR MERGER: a database written with the merger named MERGER,
// strata.uint64add or example.max (a merger strata does not ship: the
// largest of the 8-byte little-endian operands): the counter "hits" set
// to 5 in a table, then merged with 1 and 2 in the log; "seq" holds 42,
// 8 bytes big-endian, and "name" the text "ada".
func cmdMkcounts(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkcounts DIR MERGER")
	}
	merger := simpledb.Uint64AddMerger
	if args[1] != merger.Name {
		merger = &simpledb.Merger{Name: args[1], Merge: func(_, older, newer []byte) ([]byte, error) {
			if len(older) != 8 || len(newer) != 8 {
				return nil, fmt.Errorf("want 8 bytes")
			}
			return slices.Clone(slices.MaxFunc([][]byte{older, newer}, func(a, b []byte) int {
				return cmp.Compare(binary.LittleEndian.Uint64(a), binary.LittleEndian.Uint64(b))
			})), nil
		}}
	}
	db, err := simpledb.Open(ts.MkAbs(args[0]), &simpledb.Options{Merger: merger, DisableAutoCompaction: true})
	ts.Check(err)
	ts.Check(db.Put([]byte("hits"), simpledb.EncodeCounter(5), simpledb.DefaultSync))
	ts.Check(db.Put([]byte("seq"), binary.BigEndian.AppendUint64(nil, 42), simpledb.DefaultSync))
	ts.Check(db.Put([]byte("name"), []byte("ada"), simpledb.DefaultSync))
	ts.Check(db.Flush())
	for _, n := range []uint64{1, 2} {
		ts.Check(db.Merge([]byte("hits"), simpledb.EncodeCounter(n), simpledb.DefaultSync))
	}
	ts.Check(db.Close())
}

// fill DIR PREFIX N SIZE: writes N keys, PREFIX0 to PREFIX(N-1), each
// with a value of SIZE bytes of text (its key and a colon, repeated),
// into the database in DIR, creating it if need be, and flushes them into
// a table: values of 512 bytes and more go to a blob file beside it (the CLI
// cannot write one from a script: db put takes VALUE as an argument).
func cmdFill(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: fill DIR PREFIX N SIZE")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	size, err := strconv.Atoi(args[3])
	ts.Check(err)
	db, err := simpledb.Open(ts.MkAbs(args[0]), &simpledb.Options{DisableAutoCompaction: true})
	ts.Check(err)
	for i := range n {
		key := fmt.Sprintf("%s%d", args[1], i)
		ts.Check(db.Put([]byte(key), []byte(strings.Repeat(key+":", size)[:size]), simpledb.DefaultSync))
	}
	ts.Check(db.Flush())
	ts.Check(db.Close())
}

// flipbyte FILE OFFSET: flips a bit of the byte at OFFSET; a negative
// offset counts from the end, "middle" is the middle.
func cmdFlipByte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: flipbyte FILE OFFSET")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	var off int
	if args[1] == "middle" {
		off = len(data) / 2
	} else if off, err = strconv.Atoi(args[1]); err != nil {
		ts.Fatalf("offset: %v", err)
	}
	if off < 0 {
		off += len(data)
	}
	data[off] ^= 0x10
	ts.Check(os.WriteFile(path, data, 0o644))
}

// truncate FILE SIZE
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE SIZE")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	ts.Check(os.Truncate(ts.MkAbs(args[0]), n))
}

// cpdir SRC DST: copies a directory's files (testscript's cp takes files).
func cmdCpDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cpdir SRC DST")
	}
	src, dst := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(src)
	ts.Check(err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		ts.Check(err)
		ts.Check(os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
	}
}

// lockdb DIR: holds the database open in the test's process, so that
// strata, another process, finds it locked, until the script ends.
func cmdLockDB(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lockdb DIR")
	}
	db, err := simpledb.Open(ts.MkAbs(args[0]), &simpledb.Options{ErrorIfNotExists: true})
	ts.Check(err)
	ts.Defer(func() { db.Close() })
}

// Every go-sstables file of the recordio golden set dumps with the records
// go-sstables reads from it, at the same offsets; a file go-sstables reads
// to its end verifies whole, and one it stops in, or cannot open, does not.
func TestGoldenFiles(t *testing.T) {
	dir := "../../recordio/testdata/gosstables"
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	var expected struct {
		Files []struct {
			Path    string `json:"path"`
			Records []struct {
				Offset int64 `json:"offset"`
			} `json:"records"`
			Reader struct {
				OpenError string `json:"open_error"`
				EOF       bool   `json:"eof"`
				Error     string `json:"error"`
			} `json:"file_reader"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal(raw, &expected))
	require.NotEmpty(t, expected.Files)
	for _, f := range expected.Files {
		t.Run(f.Path, func(t *testing.T) {
			path := filepath.Join(dir, f.Path)
			var stdout, stderr bytes.Buffer
			status := run([]string{"rio", "dump", "--json", path}, &stdout, &stderr)
			var offsets []int64
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				var obj struct {
					Type   string `json:"type"`
					Offset int64  `json:"offset"`
				}
				if line != "" {
					require.NoError(t, json.Unmarshal([]byte(line), &obj), line)
				}
				if obj.Type == "record" {
					offsets = append(offsets, obj.Offset)
				}
			}
			var want []int64
			for _, r := range f.Records {
				want = append(want, r.Offset)
			}
			require.Equal(t, want, offsets)
			whole := f.Reader.OpenError == "" && f.Reader.EOF && strings.HasSuffix(f.Reader.Error, "EOF") && !strings.Contains(f.Reader.Error, "decompress")
			verify := run([]string{"rio", "verify", path}, io.Discard, io.Discard)
			if whole {
				require.Equal(t, exitOK, status, stderr.String())
				require.Equal(t, exitOK, verify)
			} else {
				require.NotEqual(t, exitOK, status)
				require.NotEqual(t, exitOK, verify)
				require.NotEmpty(t, stderr.String())
			}
		})
	}
}

// Exit statuses: 0 success, 1 damage or a key not found, 2 usage errors
// and paths that are not what the command reads.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	db, err := simpledb.Open(filepath.Join(dir, "db"), nil)
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("k"), []byte("v"), simpledb.DefaultSync))
	require.NoError(t, db.Put([]byte("big"), bytes.Repeat([]byte("v"), 2<<10), simpledb.DefaultSync))
	require.NoError(t, db.Flush()) // a table, and a blob file beside it
	require.NoError(t, db.Close())
	blobs, err := filepath.Glob(filepath.Join(dir, "db", "*.blob"))
	require.NoError(t, err)
	require.Len(t, blobs, 1)
	tables, err := filepath.Glob(filepath.Join(dir, "db", "*.sst"))
	require.NoError(t, err)
	require.Len(t, tables, 1)
	damaged := filepath.Join(dir, "damaged")
	require.NoError(t, os.MkdirAll(damaged, 0o755))
	entries, err := os.ReadDir(filepath.Join(dir, "db"))
	require.NoError(t, err)
	var log string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, "db", e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(damaged, e.Name()), data, 0o644))
		if strings.HasSuffix(e.Name(), ".log") {
			log = filepath.Join(damaged, e.Name())
		}
	}
	require.NotEmpty(t, log)
	current, err := os.ReadFile(filepath.Join(damaged, "CURRENT"))
	require.NoError(t, err)
	current[0] ^= 0xff // the file header: not a recordio file any more
	require.NoError(t, os.WriteFile(filepath.Join(damaged, "CURRENT"), current, 0o644))
	notes := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("hello"), 0o644))
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"db", "get", filepath.Join(dir, "db"), "k"}, exitOK},
		{[]string{"db", "get", filepath.Join(dir, "db"), "missing"}, exitFailure},
		{[]string{"db", "get", filepath.Join(dir, "db"), `"k"`}, exitOK},
		{[]string{"db", "get", filepath.Join(dir, "db"), `"missing"`}, exitFailure},
		{[]string{"db", "get", filepath.Join(dir, "db"), `"k`}, exitUsage},
		{[]string{"db", "put", filepath.Join(dir, "db"), "k", `"v`}, exitUsage},
		{[]string{"db", "scan", filepath.Join(dir, "db"), "--lower", `"\x`}, exitUsage},
		{[]string{"db", "scan", filepath.Join(dir, "db"), "--lower", "zzz"}, exitOK},
		{[]string{"db", "verify", filepath.Join(dir, "db")}, exitOK},
		{[]string{"help", "db", "get"}, exitOK},
		{nil, exitUsage},
		{[]string{"db", "get", filepath.Join(dir, "db")}, exitUsage},
		{[]string{"db", "scan", filepath.Join(dir, "db"), "--limit", "-1"}, exitUsage},
		{[]string{"db", "get", "--hex", filepath.Join(dir, "db"), "zz"}, exitUsage},
		{[]string{"db", "scan", filepath.Join(dir, "db"), "--prefix", "a", "--lower", "b"}, exitUsage},
		{[]string{"db", "ls", filepath.Join(dir, "nosuch")}, exitUsage},
		{[]string{"db", "get", filepath.Join(dir, "db"), ""}, exitUsage},
		{[]string{"db", "put", filepath.Join(dir, "db"), strings.Repeat("k", simpledb.MaxKeySize+1), "v"}, exitUsage},
		{[]string{"db", "scan", filepath.Join(dir, "db"), "--lower", "z", "--upper", "a"}, exitUsage},
		{[]string{"db", "ls", notes}, exitUsage},
		{[]string{"db", "verify", notes}, exitUsage},
		{[]string{"sst", "dump", notes}, exitUsage},
		{[]string{"rio", "dump", notes}, exitUsage},
		{[]string{"rio", "dump", dir}, exitUsage},
		{[]string{"db", "scan", damaged}, exitFailure},
		{[]string{"db", "verify", damaged}, exitFailure},
		{[]string{"log", "dump", "--format", "8", log}, exitUsage},
		{[]string{"log", "dump", log}, exitOK},
		{[]string{"blob", "dump", blobs[0]}, exitOK},
		{[]string{"blob", "verify", blobs[0]}, exitOK},
		{[]string{"sst", "dump", "--entries", tables[0]}, exitOK},
		{[]string{"sst", "verify", tables[0]}, exitOK},
		{[]string{"blob", "dump", notes}, exitUsage},
		{[]string{"blob", "verify", dir}, exitUsage},
		{[]string{"blob", "dump", tables[0]}, exitUsage},
		{[]string{"blob", "verify", log}, exitUsage},
		{[]string{"sst", "dump", blobs[0]}, exitUsage},
		{[]string{"log", "dump", blobs[0]}, exitUsage},
		{[]string{"help", "blob", "dump"}, exitOK},
		{[]string{"help", "blob"}, exitOK},
	} {
		got := run(tc.args, io.Discard, io.Discard)
		require.Equal(t, tc.want, got, "strata %s", strings.Join(tc.args, " "))
	}
}
