package simpledb

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// damage replaces a file of fsys with a version whose byte at a random
// offset is flipped, or which is cut at a random length.
func damage(t *testing.T, fsys *vfs.MemFS, path string, rng *rand.Rand) string {
	f, err := fsys.Open(path)
	require.NoError(t, err)
	data, err := io.ReadAll(f)
	require.NoError(t, err)
	f.Close()
	what := "empty"
	switch {
	case len(data) == 0:
	case rng.IntN(4) == 0:
		n := rng.IntN(len(data))
		data, what = data[:n], fmt.Sprintf("cut at %d", n)
	default:
		i := rng.IntN(len(data))
		data[i] ^= byte(1 + rng.IntN(255))
		what = fmt.Sprintf("byte %d flipped", i)
	}
	w, err := fsys.Create(path)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Sync())
	require.NoError(t, w.Close())
	return what
}

// Damage anywhere (a log, the manifest, CURRENT, a table) is reported as
// ErrCorruption, or recovered from as the policy says (a torn log tail is
// dropped); nothing panics, and no read returns a value that was never
// written to its key.
func TestCorruptionNeverGivesWrongValues(t *testing.T) {
	t.Parallel()
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	base := vfs.NewMem()
	opts := testOptions(base)
	db, err := Open("/db", opts)
	require.NoError(t, err)
	written := map[string][]string{}
	for i := range 3000 {
		k := fmt.Sprintf("key%04d", rng.IntN(800))
		v := fmt.Sprintf("value%d-%s", i, make([]byte, rng.IntN(200)))
		require.NoError(t, db.Put([]byte(k), []byte(v), DefaultSync))
		written[k] = append(written[k], v)
		if i == 2000 {
			require.NoError(t, db.Compact())
		}
	}
	require.NoError(t, db.Close()) // tables in several levels, the rest in a log

	names, err := base.List("/db")
	require.NoError(t, err)
	names = slices.DeleteFunc(names, func(n string) bool { return n == filenames.LockName })
	trials := 200
	if testseed.Long() {
		trials = 3000
	}
	outcomes := map[string]int{}
	for trial := range trials {
		fsys := base.CrashClone(vfs.CrashOptions{})
		name := names[rng.IntN(len(names))]
		what := damage(t, fsys, "/db/"+name, rng)
		msg := fmt.Sprintf("seed %d trial %d: %s %s", seed, trial, name, what)
		opts.FS = fsys
		db, err := Open("/db", opts)
		if err != nil {
			require.ErrorIs(t, err, ErrCorruption, msg)
			outcomes["open refused"]++
			continue
		}
		corrupt := false
		check := func(k string, v []byte, err error) {
			if err != nil {
				if err != ErrNotFound {
					require.ErrorIs(t, err, ErrCorruption, msg)
					corrupt = true
				}
				return
			}
			require.Contains(t, written[k], string(v), "%s: %s holds a value never written to it", msg, k)
		}
		for k := range written {
			v, err := db.Get([]byte(k))
			check(k, v, err)
		}
		it, err := db.NewIterator(nil, nil)
		require.NoError(t, err)
		for k, v := range it.All() {
			check(string(k), v, nil)
		}
		if err := it.Err(); err != nil {
			require.ErrorIs(t, err, ErrCorruption, msg)
			corrupt = true
		}
		it.Close()
		db.Close()
		if corrupt {
			outcomes["reads refused"]++
		} else {
			outcomes["opened and read"]++
		}
	}
	t.Logf("%d damaged copies: %v", trials, outcomes)
}
