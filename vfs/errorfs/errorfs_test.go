package errorfs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

func TestRuleInjectsOnlyWhatItMatches(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/d", 0o755))
	rule := &Rule{Ops: OpWrite | OpSync, Match: Suffix(".log"), After: 1, Err: syscall.ENOSPC}
	fsys := Wrap(mem, rule)

	log, err := fsys.Create("/d/1.log")
	require.NoError(t, err)
	table, err := fsys.Create("/d/1.sst")
	require.NoError(t, err)

	_, err = log.Write([]byte("before enabling"))
	require.NoError(t, err)
	rule.Enable()
	_, err = log.Write([]byte("first matching op passes"))
	require.NoError(t, err)
	_, err = log.Write([]byte("second fails"))
	require.ErrorIs(t, err, ErrInjected)
	require.ErrorIs(t, err, syscall.ENOSPC)
	var ie *InjectedError
	require.True(t, errors.As(err, &ie))
	require.Equal(t, OpWrite, ie.Op)
	require.ErrorIs(t, log.Sync(), syscall.ENOSPC)

	_, err = table.Write([]byte("other files are untouched"))
	require.NoError(t, err)
	require.NoError(t, table.Sync())
	require.NoError(t, fsys.Rename("/d/1.sst", "/d/2.sst"), "other ops are untouched")
	require.Equal(t, int64(2), rule.Hits())

	rule.Disable()
	_, err = log.Write([]byte("the fault clears"))
	require.NoError(t, err)
}

func TestOpString(t *testing.T) {
	require.Equal(t, "write|sync", (OpWrite | OpSync).String())
	require.Contains(t, OpAll.String(), "lock")
	require.Contains(t, OpAll.String(), "link")
}

// A link fails as OpLink on the new name, and creates nothing.
func TestRuleInjectsIntoLink(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/d", 0o755))
	f, err := mem.Create("/d/1.sst")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	rule := &Rule{Ops: OpLink, Match: Suffix("2.sst"), Err: syscall.EXDEV}
	fsys := Wrap(mem, rule)
	rule.Enable()
	require.ErrorIs(t, fsys.Link("/d/1.sst", "/d/2.sst"), syscall.EXDEV)
	_, err = mem.Stat("/d/2.sst")
	require.Error(t, err, "nothing linked")
	require.NoError(t, fsys.Link("/d/1.sst", "/d/3.sst"), "other names link")
}

// A reuse fails as OpReuse on the new name, and the reused file's writes
// and syncs as the file's own operations.
func TestRuleInjectsIntoReuse(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/d", 0o755))
	for _, name := range []string{"/d/1.log", "/d/2.log"} {
		f, err := mem.Create(name)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	reuse := &Rule{Ops: OpReuse, Match: Suffix("3.log"), Err: syscall.EIO}
	writes := &Rule{Ops: OpWrite, Match: Suffix("4.log"), Err: syscall.ENOSPC}
	fsys := Wrap(mem, multi{reuse, writes})
	reuse.Enable()
	writes.Enable()

	_, err := fsys.ReuseForWrite("/d/1.log", "/d/3.log")
	require.ErrorIs(t, err, syscall.EIO)
	_, err = mem.Stat("/d/1.log")
	require.NoError(t, err, "nothing renamed")

	f, err := fsys.ReuseForWrite("/d/2.log", "/d/4.log")
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, f.Close())
}

// Over a filesystem without mappings, the mapped operations are
// unsupported, so callers fall back to Create and ReuseForWrite.
func TestMappedUnsupportedOverMem(t *testing.T) {
	fsys := Wrap(vfs.NewMem(), &Rule{})
	_, err := fsys.CreateMapped("/f", vfs.MappedOptions{Chunk: 4096})
	require.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = fsys.ReuseMapped("/f", "/g", vfs.MappedOptions{Chunk: 4096})
	require.ErrorIs(t, err, errors.ErrUnsupported)
}

// multi injects the first error any rule returns.
type multi []*Rule

func (m multi) MaybeError(op Op, path string) error {
	for _, r := range m {
		if err := r.MaybeError(op, path); err != nil {
			return err
		}
	}
	return nil
}
