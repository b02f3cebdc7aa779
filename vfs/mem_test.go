package vfs

import (
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
		t.Run(tc.name, func(t *testing.T) {
			fsys := NewMem()
			require.NoError(t, fsys.MkdirAll("/d", 0o755))
			require.NoError(t, fsys.SyncDir("/"))
			tc.act(t, fsys)
			got, ok := readFile(t, fsys.CrashClone(CrashOptions{}), tc.file)
			require.Equal(t, tc.exists, ok)
			require.Equal(t, tc.want, got)
		})
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
	for seed := range uint64(20) {
		opts := func() CrashOptions { return CrashOptions{Rand: rand.New(rand.NewPCG(seed, 5))} }
		require.Equal(t, contents(fsys.CrashClone(opts())), contents(fsys.CrashClone(opts())), "seed %d", seed)
	}
}
