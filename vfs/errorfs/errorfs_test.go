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
}
