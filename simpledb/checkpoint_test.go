package simpledb

import (
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// openCheckpoint opens the checkpoint in dir, reads all of it and closes
// it.
func openCheckpoint(t *testing.T, fsys vfs.FS, dir string) model {
	t.Helper()
	opts := testOptions(fsys)
	db, err := Open(dir, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	return readAll(t, db)
}

// A checkpoint taken while writers run holds, of each writer's writes,
// every one acknowledged before the call, none begun after it returned,
// and exactly a prefix: each key at the value of the writer's last write
// in the checkpoint that set it. Flushes and compactions run throughout.
func TestCheckpointWhileWriting(t *testing.T) {
	seed := testseed.Seed(t)
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, "db"), smallOptions())
	require.NoError(t, err)
	defer db.Close()
	const writers, slots = 4, 40
	var acked, started [writers]atomic.Int64 // the writes each writer has had acknowledged, and begun
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := int64(1); !stop.Load(); i++ {
				started[w].Store(i)
				k := fmt.Appendf(nil, "w%d-%02d", w, i%slots)
				v := fmt.Appendf(nil, "%d.%s", i, make([]byte, rng.IntN(300)))
				if err := db.Put(k, v, syncIf(i%5 == 0)); err != nil {
					t.Error(err)
					return
				}
				acked[w].Store(i)
			}
		}()
	}
	type taken struct {
		dir             string
		before, startAt [writers]int64
	}
	var checkpoints []taken
	for n := range 5 {
		for acked[0].Load() < int64(500*(n+1)) && !t.Failed() {
			time.Sleep(time.Millisecond)
		}
		c := taken{dir: filepath.Join(dir, fmt.Sprintf("ckpt-%d", n))}
		for w := range writers {
			c.before[w] = acked[w].Load()
		}
		require.NoError(t, db.Checkpoint(c.dir))
		for w := range writers {
			c.startAt[w] = started[w].Load()
		}
		checkpoints = append(checkpoints, c)
	}
	stop.Store(true)
	wg.Wait()
	require.Positive(t, db.Stats().Flushes, "flushes ran meanwhile")

	for n, c := range checkpoints {
		got := openCheckpoint(t, vfs.Default, c.dir)
		for w := range writers {
			var last int64 // the writer's last write in the checkpoint
			for slot := range slots {
				if v, ok := got[fmt.Sprintf("w%d-%02d", w, slot)]; ok {
					i, err := strconv.ParseInt(v[:strings.IndexByte(v, '.')], 10, 64)
					require.NoError(t, err)
					last = max(last, i)
				}
			}
			msg := fmt.Sprintf("checkpoint %d, writer %d", n, w)
			require.GreaterOrEqual(t, last, c.before[w], "%s: every acknowledged write", msg)
			require.LessOrEqual(t, last, c.startAt[w], "%s: no write begun after it returned", msg)
			for slot := range int64(slots) {
				k := fmt.Sprintf("w%d-%02d", w, slot)
				want := last - ((last-slot)%slots+slots)%slots // the last write to the slot up to last
				if want < 1 {
					require.NotContains(t, got, k, msg)
					continue
				}
				require.Contains(t, got, k, msg)
				require.Equal(t, strconv.FormatInt(want, 10), got[k][:strings.IndexByte(got[k], '.')], "%s: %s", msg, k)
			}
		}
	}
}

// A checkpoint is its own database: it keeps its contents whatever the
// source does afterwards, writes, compactions deleting the tables it
// shares, or the source directory's removal.
func TestCheckpointOutlivesSource(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys func(t *testing.T) (vfs.FS, string)
	}{
		{"os", func(t *testing.T) (vfs.FS, string) { return vfs.Default, t.TempDir() }},
		{"mem", func(t *testing.T) (vfs.FS, string) { return vfs.NewMem(), "/" }},
		{"copies where links fail", func(t *testing.T) (vfs.FS, string) {
			rule := &errorfs.Rule{Ops: errorfs.OpLink, Err: syscall.EXDEV}
			rule.Enable()
			return errorfs.Wrap(vfs.NewMem(), rule), "/"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, root := tc.fsys(t)
			opts := testOptions(fsys)
			src, ckpt := filepath.Join(root, "db"), filepath.Join(root, "backups", "daily", "ckpt")
			db, err := Open(src, opts)
			require.NoError(t, err)
			m := putAcked(t, db, 0, 600)
			require.NoError(t, db.Compact())
			maps.Copy(m, putAcked(t, db, 500, 800)) // in tables and the memstore
			require.NoError(t, db.Delete([]byte("key0003"), DefaultSync))
			delete(m, "key0003")
			require.Positive(t, db.Stats().Levels[1].Tables)
			require.NoError(t, db.Checkpoint(ckpt))
			if fsys == vfs.Default {
				requireLinkedTables(t, src, ckpt)
			}

			putAcked(t, db, 0, 800)
			require.NoError(t, db.Delete([]byte("key0004"), DefaultSync))
			require.NoError(t, db.Compact())
			require.NoError(t, db.Close())
			names, err := fsys.List(src)
			require.NoError(t, err)
			for _, name := range names {
				require.NoError(t, fsys.Remove(filepath.Join(src, name)))
			}
			require.Equal(t, m, openCheckpoint(t, fsys, ckpt))
			require.Equal(t, m, openCheckpoint(t, fsys, ckpt), "and again, after its own recovery")
		})
	}
}

// A power loss right after Checkpoint returns leaves the whole checkpoint;
// one at any point while it runs leaves either the whole checkpoint or
// one that does not open, never a part that opens as if whole.
func TestCheckpointPowerLoss(t *testing.T) {
	mem := vfs.NewMem()
	db, err := openQuiet(mem)
	require.NoError(t, err)
	m := putAcked(t, db, 0, 300)
	require.NoError(t, db.Compact())
	maps.Copy(m, putAcked(t, db, 250, 400))
	require.NoError(t, db.Close())

	for n := int64(0); ; n++ {
		base := mem.CrashClone(vfs.CrashOptions{})
		rule := &errorfs.Rule{Ops: mutatingOps, After: n, Err: syscall.EIO}
		opts := smallOptions()
		opts.FS, opts.Logger, opts.DisableAutoCompaction = errorfs.Wrap(base, rule), quietLogger, true
		db, err := Open("/db", opts)
		require.NoError(t, err)
		maps.Copy(m, putAcked(t, db, 380, 450)) // in the memstore
		rule.Enable()
		cerr := db.Checkpoint("/ckpt")
		crashes := []*vfs.MemFS{
			base.CrashClone(vfs.CrashOptions{}),
			base.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(uint64(n), 1))}),
			base.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(uint64(n), 2)), PageLoss: true, PageSize: 64}),
		}
		rule.Disable()
		require.NoError(t, db.Close())
		for i, crashed := range crashes {
			msg := fmt.Sprintf("power lost at change %d of the checkpoint (clone %d), after %v", n+1, i, cerr)
			// Read-only, so that a checkpoint missing is not created.
			copts := testOptions(crashed)
			copts.ReadOnly = true
			ckpt, err := Open("/ckpt", copts)
			if cerr == nil {
				require.NoError(t, err, msg)
			}
			if err != nil {
				continue
			}
			require.Equal(t, m, readAll(t, ckpt), msg)
			require.NoError(t, ckpt.Close())
		}
		if rule.Hits() == 0 {
			require.NoError(t, cerr)
			t.Logf("%d changes, a power loss after each left the whole checkpoint or none", n)
			return
		}
	}
}

func TestCheckpointRefuses(t *testing.T) {
	mem, m := builtDB(t)
	db, err := openQuiet(mem)
	require.NoError(t, err)
	defer db.Close()

	require.NoError(t, mem.MkdirAll("/full", 0o755))
	f, err := mem.Create("/full/notes.txt")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.ErrorIs(t, db.Checkpoint("/full"), ErrCheckpointExists)
	names, err := mem.List("/full")
	require.NoError(t, err)
	require.Equal(t, []string{"notes.txt"}, names, "nothing written")
	require.ErrorIs(t, db.Checkpoint("/db"), ErrCheckpointExists, "the database's own directory")
	require.ErrorIs(t, db.Checkpoint("/full/notes.txt"), syscall.ENOTDIR)

	require.NoError(t, mem.MkdirAll("/empty", 0o755))
	require.NoError(t, db.Checkpoint("/empty"), "an empty directory will do")
	require.Equal(t, m, openCheckpoint(t, mem, "/empty"))

	require.NoError(t, db.Close())
	require.ErrorIs(t, db.Checkpoint("/later"), ErrClosed)
	_, err = mem.Stat("/later")
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing created")

	// A failure part way, here the last step, removes what it wrote.
	rule := &errorfs.Rule{Ops: errorfs.OpRename, Match: errorfs.Suffix(filenames.CurrentName), Err: syscall.ENOSPC}
	opts := smallOptions()
	opts.FS, opts.Logger = errorfs.Wrap(mem, rule), quietLogger
	db, err = Open("/db", opts)
	require.NoError(t, err)
	rule.Enable()
	require.ErrorIs(t, db.Checkpoint("/none/ckpt"), syscall.ENOSPC)
	require.Positive(t, rule.Hits())
	_, err = mem.Stat("/none/ckpt")
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing left of it")
}

// A read-only database checkpoints too, its logs' writes included, and
// its own directory is left as it was.
func TestCheckpointReadOnly(t *testing.T) {
	mem, m := builtDB(t)
	before := readDirFiles(t, mem, "/db")
	rule := &errorfs.Rule{Ops: mutatingOps, Match: errorfs.Contains("/db"), Err: syscall.EPERM}
	rule.Enable()
	opts := smallOptions()
	opts.FS, opts.Logger, opts.ReadOnly = errorfs.Wrap(mem, rule), quietLogger, true
	ro, err := Open("/db", opts)
	require.NoError(t, err)
	require.NoError(t, ro.Checkpoint("/ckpt"))
	require.NoError(t, ro.Close())
	require.Zero(t, rule.Hits(), "no change to the database's directory was attempted")
	require.Equal(t, before, readDirFiles(t, mem, "/db"))
	require.Equal(t, m, openCheckpoint(t, mem, "/ckpt"))
}

// requireLinkedTables checks that the tables of checkpoint ckpt that the
// database in src holds too are the same files, hard links.
func requireLinkedTables(t *testing.T, src, ckpt string) {
	t.Helper()
	tables, err := filepath.Glob(filepath.Join(ckpt, "*.sst"))
	require.NoError(t, err)
	linked := 0
	for _, path := range tables {
		theirs, err := os.Stat(filepath.Join(src, filepath.Base(path)))
		if err != nil {
			continue // the memstores' table
		}
		ours, err := os.Stat(path)
		require.NoError(t, err)
		require.True(t, os.SameFile(ours, theirs), "%s is a link", path)
		linked++
	}
	require.Positive(t, linked)
}

// A Close while a checkpoint runs waits for it; a checkpoint after Close
// is ErrClosed. Either way what Checkpoint reports is so.
func TestCheckpointDuringClose(t *testing.T) {
	for i := range 10 {
		mem := vfs.NewMem()
		db, err := openQuiet(mem)
		require.NoError(t, err)
		m := putAcked(t, db, 0, 1000)
		done := make(chan error, 1)
		go func() { done <- db.Checkpoint("/ckpt") }()
		if i%2 == 0 {
			time.Sleep(time.Duration(i) * 100 * time.Microsecond)
		}
		require.NoError(t, db.Close())
		switch err := <-done; {
		case err == nil:
			require.Equal(t, m, openCheckpoint(t, mem, "/ckpt"), "round %d", i)
		default:
			require.ErrorIs(t, err, ErrClosed, "round %d", i)
			_, err := mem.Stat("/ckpt")
			require.ErrorIs(t, err, fs.ErrNotExist, "round %d: nothing written", i)
		}
	}
}
