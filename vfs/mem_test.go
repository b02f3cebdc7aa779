package vfs

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, fsys *MemFS, name, data string, sync bool) File {
	t.Helper()
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte(data))
	require.NoError(t, err)
	if sync {
		require.NoError(t, f.Sync())
	}
	return f
}

func readFile(t *testing.T, fsys FS, name string) (string, bool) {
	t.Helper()
	f, err := fsys.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return string(b), true
}

// What a power loss keeps, case by case, as POSIX promises it.
func TestCrashCloneKeepsOnlyWhatIsDurable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		act        func(t *testing.T, fsys *MemFS)
		file, want string
		exists     bool
	}{
		{"unsynced create is lost", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/f", "data", true)
		}, "/d/f", "", false},
		{"synced entry, unsynced data: empty file", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/f", "data", false)
			require.NoError(t, fsys.SyncDir("/d"))
		}, "/d/f", "", true},
		{"synced entry and data survive", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/f", "data", true)
			require.NoError(t, fsys.SyncDir("/d"))
		}, "/d/f", "data", true},
		{"unsynced appends are lost", func(t *testing.T, fsys *MemFS) {
			f := writeFile(t, fsys, "/d/f", "data", true)
			require.NoError(t, fsys.SyncDir("/d"))
			_, err := f.Write([]byte("more"))
			require.NoError(t, err)
		}, "/d/f", "data", true},
		{"unsynced rename keeps the old name", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/old", "data", true)
			require.NoError(t, fsys.SyncDir("/d"))
			require.NoError(t, fsys.Rename("/d/old", "/d/new"))
		}, "/d/old", "data", true},
		{"unsynced rename: new name missing", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/old", "data", true)
			require.NoError(t, fsys.SyncDir("/d"))
			require.NoError(t, fsys.Rename("/d/old", "/d/new"))
		}, "/d/new", "", false},
		{"synced rename moves the file", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/old", "data", true)
			require.NoError(t, fsys.Rename("/d/old", "/d/new"))
			require.NoError(t, fsys.SyncDir("/d"))
		}, "/d/new", "data", true},
		{"unsynced remove is undone", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/f", "data", true)
			require.NoError(t, fsys.SyncDir("/d"))
			require.NoError(t, fsys.Remove("/d/f"))
		}, "/d/f", "data", true},
		{"create truncates a synced file in place: synced new data survives", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/f", "old data", true)
			require.NoError(t, fsys.SyncDir("/d"))
			writeFile(t, fsys, "/d/f", "new", true)
		}, "/d/f", "new", true},
		{"create truncates a synced file in place: unsynced new data is lost", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/f", "old data", true)
			require.NoError(t, fsys.SyncDir("/d"))
			writeFile(t, fsys, "/d/f", "new", false)
		}, "/d/f", "", true},
		{"unsynced directory is lost", func(t *testing.T, fsys *MemFS) {
			require.NoError(t, fsys.MkdirAll("/d/sub", 0o755))
			writeFile(t, fsys, "/d/sub/f", "data", true)
			require.NoError(t, fsys.SyncDir("/d/sub"))
		}, "/d/sub/f", "", false},
		{"unsynced link is lost", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/f", "data", true)
			require.NoError(t, fsys.SyncDir("/d"))
			require.NoError(t, fsys.Link("/d/f", "/d/g"))
		}, "/d/g", "", false},
		{"synced link survives its source's removal", func(t *testing.T, fsys *MemFS) {
			writeFile(t, fsys, "/d/f", "data", true)
			require.NoError(t, fsys.Link("/d/f", "/d/g"))
			require.NoError(t, fsys.SyncDir("/d"))
			require.NoError(t, fsys.Remove("/d/f"))
			require.NoError(t, fsys.SyncDir("/d"))
		}, "/d/g", "data", true},
		{"a link shares its file's unsynced writes", func(t *testing.T, fsys *MemFS) {
			f := writeFile(t, fsys, "/d/f", "data", true)
			require.NoError(t, fsys.Link("/d/f", "/d/g"))
			require.NoError(t, fsys.SyncDir("/d"))
			_, err := f.Write([]byte("more"))
			require.NoError(t, err)
		}, "/d/g", "data", true},
	} {
		// Directory entries follow the same rules however unsynced bytes
		// fare; where some may survive, the synced ones still lead.
		for _, crash := range []struct {
			name  string
			opts  func() CrashOptions
			exact bool
		}{
			{"nothing unsynced", func() CrashOptions { return CrashOptions{} }, true},
			{"page loss without Rand", func() CrashOptions { return CrashOptions{PageLoss: true, PageSize: 1} }, true},
			{"torn tail", func() CrashOptions { return CrashOptions{Rand: rand.New(rand.NewPCG(1, 1))} }, false},
			{"page loss", func() CrashOptions {
				return CrashOptions{Rand: rand.New(rand.NewPCG(1, 1)), PageLoss: true, PageSize: 1}
			}, false},
		} {
			t.Run(tc.name+"/"+crash.name, func(t *testing.T) {
				fsys := NewMem()
				require.NoError(t, fsys.MkdirAll("/d", 0o755))
				require.NoError(t, fsys.SyncDir("/"))
				tc.act(t, fsys)
				got, ok := readFile(t, fsys.CrashClone(crash.opts()), tc.file)
				require.Equal(t, tc.exists, ok)
				if crash.exact {
					require.Equal(t, tc.want, got)
				} else {
					require.True(t, strings.HasPrefix(got, tc.want), "%q does not begin with the synced %q", got, tc.want)
				}
			})
		}
	}
}

func TestCrashCloneTearsTails(t *testing.T) {
	fsys := NewMem()
	require.NoError(t, fsys.MkdirAll("/d", 0o755))
	require.NoError(t, fsys.SyncDir("/"))
	f := writeFile(t, fsys, "/d/f", "synced|", true)
	require.NoError(t, fsys.SyncDir("/d"))
	_, err := f.Write([]byte("0123456789"))
	require.NoError(t, err)

	seen := map[int]bool{}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		got, ok := readFile(t, fsys.CrashClone(CrashOptions{Rand: rng}), "/d/f")
		require.True(t, ok)
		require.Equal(t, "synced|0123456789"[:len(got)], got, "a torn tail is a prefix of what was written")
		require.GreaterOrEqual(t, len(got), len("synced|"))
		seen[len(got)] = true
	}
	require.Len(t, seen, 11, "every tail length from none to all")

	// The original goes on unchanged, and clones are independent of it.
	clone := fsys.CrashClone(CrashOptions{})
	_, err = f.Write([]byte("!"))
	require.NoError(t, err)
	got, _ := readFile(t, clone, "/d/f")
	require.Equal(t, "synced|", got)
	got, _ = readFile(t, fsys, "/d/f")
	require.Equal(t, "synced|0123456789!", got)
}

// written returns n bytes as a file would hold them, none of them zero, so
// that a lost page can be told from a kept one.
func written(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + i%251)
	}
	return b
}

// fileWithTail returns a filesystem holding /d/f, durable by name, whose
// first synced bytes of data are synced and the rest not.
func fileWithTail(t *testing.T, data []byte, synced int) *MemFS {
	t.Helper()
	fsys := NewMem()
	require.NoError(t, fsys.MkdirAll("/d", 0o755))
	require.NoError(t, fsys.SyncDir("/"))
	f, err := fsys.Create("/d/f")
	require.NoError(t, err)
	require.NoError(t, fsys.SyncDir("/d"))
	_, err = f.Write(data[:synced])
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	_, err = f.Write(data[synced:])
	require.NoError(t, err)
	return fsys
}

// With PageLoss, each unsynced page survives or reads as zeros, in any
// order, up to a random length; the synced prefix always survives.
func TestCrashClonePageLossLosesPagesInAnyOrder(t *testing.T) {
	const page = DefaultCrashPageSize
	for _, tc := range []struct {
		name          string
		pageSize      int // 0 means the default
		synced, total int
	}{
		{"synced prefix ends on a page boundary", 0, 2 * page, 8 * page},
		{"synced prefix ends mid-page", 0, page + 100, 6*page + 7},
		{"nothing synced", 0, 0, 6 * page},
		{"small pages", 16, 5, 5 + 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := written(tc.total)
			fsys := fileWithTail(t, data, tc.synced)
			size := tc.pageSize
			if size == 0 {
				size = DefaultCrashPageSize
			}
			var sawKept, sawLost, sawLostThenKept bool
			for seed := range uint64(300) {
				opts := CrashOptions{Rand: rand.New(rand.NewPCG(seed, 3)), PageLoss: true, PageSize: tc.pageSize}
				s, ok := readFile(t, fsys.CrashClone(opts), "/d/f")
				require.True(t, ok)
				got := []byte(s)
				require.GreaterOrEqual(t, len(got), tc.synced, "seed %d: the kept length covers the synced prefix", seed)
				require.LessOrEqual(t, len(got), tc.total, "seed %d: the kept length is at most what was written", seed)
				require.Equal(t, data[:tc.synced], got[:tc.synced], "seed %d: the synced prefix is intact", seed)

				lostBefore := false
				for lo := tc.synced; lo < len(got); {
					hi := min((lo/size+1)*size, len(got))
					switch {
					case bytes.Equal(got[lo:hi], data[lo:hi]):
						sawKept = true
						sawLostThenKept = sawLostThenKept || lostBefore
					case bytes.Count(got[lo:hi], []byte{0}) == hi-lo:
						sawLost, lostBefore = true, true
					default:
						require.Failf(t, "a page is neither kept nor lost", "seed %d: bytes %d..%d", seed, lo, hi)
					}
					lo = hi
				}
			}
			require.True(t, sawKept, "some unsynced page is kept")
			require.True(t, sawLost, "some unsynced page is lost")
			require.True(t, sawLostThenKept, "a lost page is followed by a kept one")

			got, _ := readFile(t, fsys, "/d/f")
			require.Equal(t, string(data), got, "the original is unchanged")
			got, _ = readFile(t, fsys.CrashClone(CrashOptions{}), "/d/f")
			require.Equal(t, string(data[:tc.synced]), got, "the original's synced length is unchanged")
		})
	}
}

// Without PageLoss, Rand tears each file's tail as it always has: files draw
// one length each, in order of path, and keep that prefix.
func TestCrashCloneWithoutPageLossTearsTails(t *testing.T) {
	type file struct {
		name          string
		synced, total int
	}
	files := []file{ // in order of path
		{"/a/x", 3, 40},
		{"/a/y", 10, 10}, // fully synced: draws nothing
		{"/a/z", 0, 9000},
		{"/b/w", 4096, 3 * 4096},
	}
	fsys := NewMem()
	for _, f := range files {
		require.NoError(t, fsys.MkdirAll(f.name[:2], 0o755))
		w, err := fsys.Create(f.name)
		require.NoError(t, err)
		data := written(f.total)
		_, err = w.Write(data[:f.synced])
		require.NoError(t, err)
		require.NoError(t, w.Sync())
		_, err = w.Write(data[f.synced:])
		require.NoError(t, err)
		require.NoError(t, fsys.SyncDir(f.name[:2]))
	}
	require.NoError(t, fsys.SyncDir("/"))

	for _, tc := range []struct {
		name string
		opts func(rng *rand.Rand) CrashOptions
	}{
		{"default", func(rng *rand.Rand) CrashOptions { return CrashOptions{Rand: rng} }},
		{"page size alone changes nothing", func(rng *rand.Rand) CrashOptions { return CrashOptions{Rand: rng, PageSize: 16} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(50) {
				clone := fsys.CrashClone(tc.opts(rand.New(rand.NewPCG(seed, 4))))
				twin := rand.New(rand.NewPCG(seed, 4))
				for _, f := range files {
					keep := f.synced
					if f.total > f.synced {
						keep += twin.IntN(f.total - f.synced + 1)
					}
					got, ok := readFile(t, clone, f.name)
					require.True(t, ok)
					require.Equal(t, string(written(f.total)[:keep]), got, "seed %d: %s", seed, f.name)
				}
			}
		})
	}
}

// A seed determines the clone, however many files draw from it.
func TestCrashCloneIsDeterministic(t *testing.T) {
	fsys := NewMem()
	var names []string
	for d := range 3 {
		dir := fmt.Sprintf("/d%d", d)
		require.NoError(t, fsys.MkdirAll(dir, 0o755))
		for i := range 8 {
			name := fmt.Sprintf("%s/%d", dir, i)
			writeFile(t, fsys, name, strings.Repeat("x", 100*i), true)
			names = append(names, name)
		}
		require.NoError(t, fsys.SyncDir(dir))
	}
	require.NoError(t, fsys.SyncDir("/"))
	for _, name := range names {
		f, err := fsys.Create(name) // truncated in place: all unsynced now
		require.NoError(t, err)
		_, err = f.Write(written(3000))
		require.NoError(t, err)
	}

	contents := func(clone *MemFS) []string {
		var all []string
		for _, name := range names {
			got, ok := readFile(t, clone, name)
			require.True(t, ok)
			all = append(all, got)
		}
		return all
	}
	for _, pageLoss := range []bool{false, true} {
		t.Run(fmt.Sprintf("page loss %v", pageLoss), func(t *testing.T) {
			for seed := range uint64(20) {
				opts := func() CrashOptions {
					return CrashOptions{Rand: rand.New(rand.NewPCG(seed, 5)), PageLoss: pageLoss, PageSize: 64}
				}
				require.Equal(t, contents(fsys.CrashClone(opts())), contents(fsys.CrashClone(opts())), "seed %d", seed)
			}
		})
	}
}

// overwrittenFile returns a filesystem holding /d/new, durable by name: the
// file /d/old, whose synced bytes were old, reused and written over with
// the unsynced bytes written, and closed (cut to them) if close is set.
func overwrittenFile(t *testing.T, old, written []byte, close bool) *MemFS {
	t.Helper()
	fsys := NewMem()
	require.NoError(t, fsys.MkdirAll("/d", 0o755))
	require.NoError(t, fsys.SyncDir("/"))
	f := writeFile(t, fsys, "/d/old", string(old), true)
	require.NoError(t, f.Close())
	f, err := fsys.ReuseForWrite("/d/old", "/d/new")
	require.NoError(t, err)
	require.NoError(t, fsys.SyncDir("/d"))
	_, err = f.Write(written)
	require.NoError(t, err)
	if close {
		require.NoError(t, f.Close())
	}
	return fsys
}

// Bytes written over are synced only by a Sync: until then a power loss
// leaves them as last synced, and a cut of the file is not durable either.
func TestCrashCloneRevertsOverwrites(t *testing.T) {
	old := bytes.Repeat([]byte("old."), 3000) // 12,000 bytes: three pages
	for _, tc := range []struct {
		name    string
		written int
		close   bool
		sync    bool
		want    func(written []byte) []byte
	}{
		{"unsynced overwrite reverts", 5000, false, false, func([]byte) []byte { return old }},
		{"unsynced cut is undone", 5000, true, false, func([]byte) []byte { return old }},
		{"unsynced overwrite past the old end reverts and is cut", 20000, false, false, func([]byte) []byte { return old }},
		{"synced overwrite stays, the old bytes past it too", 5000, false, true, func(w []byte) []byte {
			return append(slices.Clone(w), old[len(w):]...)
		}},
		{"synced cut stays", 5000, true, true, func(w []byte) []byte { return w }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			written := written(tc.written)
			fsys := overwrittenFile(t, old, written, tc.close)
			if tc.sync {
				// Through another handle: the writer may be closed.
				f, err := fsys.Open("/d/new")
				require.NoError(t, err)
				require.NoError(t, f.Sync())
				require.NoError(t, f.Close())
			}
			got, ok := readFile(t, fsys.CrashClone(CrashOptions{}), "/d/new")
			require.True(t, ok)
			require.Equal(t, string(tc.want(written)), got)
		})
	}
}

// With Rand, the writes over a file since its sync survive up to a random
// offset, as a torn tail: new bytes before it, the synced ones after.
func TestCrashCloneTearsOverwrites(t *testing.T) {
	old := bytes.Repeat([]byte{0xee}, 3*savePage)
	written := written(savePage + 100)
	fsys := overwrittenFile(t, old, written, true)
	cuts := map[int]bool{}
	for seed := range uint64(200) {
		got, ok := readFile(t, fsys.CrashClone(CrashOptions{Rand: rand.New(rand.NewPCG(seed, 6))}), "/d/new")
		require.True(t, ok)
		require.Len(t, got, len(old), "seed %d: the cut is not durable", seed)
		k := 0
		for k < len(written) && got[k] == written[k] {
			k++
		}
		require.Equal(t, string(old[k:]), got[k:], "seed %d: new bytes up to %d, then the synced ones", seed, k)
		cuts[k] = true
	}
	require.True(t, cuts[len(written)], "all of the writes survive in some clones")
	require.Greater(t, len(cuts), 10, "and part of them in others")
}

// With PageLoss, each page written over since the sync independently holds
// its new bytes or its synced ones, and each appended page its new bytes or
// zeros.
func TestCrashClonePageLossRevertsOverwrittenPages(t *testing.T) {
	const page = 512
	old := bytes.Repeat([]byte{0xee}, 4*page)
	written := written(6*page + 10) // over the old bytes, then past them
	fsys := overwrittenFile(t, old, written, false)
	var sawNew, sawOld, sawOldThenNew, sawZeros bool
	for seed := range uint64(300) {
		opts := CrashOptions{Rand: rand.New(rand.NewPCG(seed, 7)), PageLoss: true, PageSize: page}
		got, ok := readFile(t, fsys.CrashClone(opts), "/d/new")
		require.True(t, ok)
		require.GreaterOrEqual(t, len(got), len(old), "seed %d: the synced length survives", seed)
		oldBefore := false
		for lo := 0; lo < len(got); lo += page {
			hi := min(lo+page, len(got))
			switch {
			case string(written[lo:hi]) == got[lo:hi]:
				sawNew = true
				sawOldThenNew = sawOldThenNew || oldBefore
			case hi <= len(old) && string(old[lo:hi]) == got[lo:hi]:
				sawOld, oldBefore = true, true
			case lo >= len(old) && strings.Count(got[lo:hi], "\x00") == hi-lo:
				sawZeros = true
			default:
				require.Failf(t, "a page is neither new, as synced nor zeros", "seed %d: bytes %d..%d", seed, lo, hi)
			}
		}
	}
	require.True(t, sawNew && sawOld && sawOldThenNew && sawZeros, "pages written over and appended are kept and lost in any order")
}

// Saving synced bytes costs only what is written over: appends save
// nothing, and a Sync drops what was saved.
func TestMemFSSavesOnlyPagesWrittenOver(t *testing.T) {
	fsys := NewMem()
	f := writeFile(t, fsys, "/f", string(written(10*savePage)), true)
	node := f.(*memFile).node
	_, err := f.Write(written(savePage))
	require.NoError(t, err)
	require.Empty(t, node.saved, "appends save nothing")

	r, err := fsys.ReuseForWrite("/f", "/g")
	require.NoError(t, err)
	_, err = r.Write(written(savePage + 1))
	require.NoError(t, err)
	require.Len(t, node.saved, 2, "the two pages written over")
	require.Len(t, node.saved[1], savePage, "each as synced")
	require.NoError(t, r.Sync())
	require.Empty(t, node.saved, "a Sync makes them durable")
}
