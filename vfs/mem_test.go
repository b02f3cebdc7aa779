package vfs

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
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
