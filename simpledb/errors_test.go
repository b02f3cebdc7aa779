package simpledb

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/errs"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"

	"github.com/stretchr/testify/require"
)

// The errors of limits say the limit, as a caller meets them: in a log
// line, far from this package's documentation.
func TestLimitErrorsStateTheLimit(t *testing.T) {
	db, err := Open(t.TempDir(), smallOptions())
	require.NoError(t, err)
	defer db.Close()
	for _, tc := range []struct {
		name    string
		err     error
		limit   error
		message string
	}{
		{"key", db.Put(make([]byte, MaxKeySize+1), nil, DefaultSync), ErrKeyTooLarge, "strata: key over 64 KiB: 65537 bytes"},
		{"range deletion's end", db.DeleteRange(nil, make([]byte, MaxKeySize+1), DefaultSync), ErrKeyTooLarge, "strata: key over 64 KiB: 65537 bytes"},
		{"value", db.Put([]byte("k"), make([]byte, MaxValueSize+1), DefaultSync), ErrValueTooLarge, "simpledb: value over 64 MiB: 67108865 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.err, tc.limit)
			require.EqualError(t, tc.err, tc.message)
		})
	}
	require.EqualError(t, ErrBatchTooLarge, "simpledb: batch over 512 MiB")
}

// packageName matches a package's name where a part of a message begins.
var packageName = regexp.MustCompile(`(^|: )(` + strings.Join(errs.Names, "|") + `): `)

// namesOnePackage reports whether err's message names a package once, at
// its start, as every error the database returns must.
func namesOnePackage(err error) bool {
	found := packageName.FindAllStringIndex(err.Error(), -1)
	return len(found) == 1 && found[0][0] == 0
}

// An error names the package the caller called, once, however many layers
// it came through: each failure below crosses at least two.
func TestErrorsNameOnePackage(t *testing.T) {
	dir := t.TempDir()
	live, err := Open(filepath.Join(dir, "live"), smallOptions())
	require.NoError(t, err)
	defer live.Close()
	require.NoError(t, live.Put([]byte("k"), []byte("v"), DefaultSync))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "afile"), nil, 0o644))

	closed, err := Open(filepath.Join(dir, "closed"), smallOptions())
	require.NoError(t, err)
	require.NoError(t, closed.Close())

	mem := vfs.NewMem()
	tableSync := &errorfs.Rule{Ops: errorfs.OpSync, Match: errorfs.Suffix(".sst.tmp"), Err: syscall.EIO}
	opts := smallOptions()
	opts.FS, opts.Logger = errorfs.Wrap(mem, tableSync), quietLogger
	failing, err := Open("/db", opts)
	require.NoError(t, err)
	defer failing.Close()
	require.NoError(t, failing.Put([]byte("k"), []byte("v"), DefaultSync))
	tableSync.Enable()
	flushErr := failing.Flush()

	for _, tc := range []struct {
		name string
		err  error
		is   error
	}{
		{"locked", openErr(Open(filepath.Join(dir, "live"), smallOptions())), vfs.ErrLocked},
		{"not a database", openErr(Open(filepath.Join(dir, "missing"), &Options{ErrorIfNotExists: true})), ErrNotDB},
		{"a file", openErr(Open(filepath.Join(dir, "afile"), smallOptions())), ErrNotDB},
		{"closed", closed.Put([]byte("k"), nil, DefaultSync), ErrClosed},
		{"checkpoint into a database", live.Checkpoint(filepath.Join(dir, "live")), ErrCheckpointExists},
		{"a failed flush", flushErr, syscall.EIO},
		{"the failure, as a background error", flushErr, ErrBackground},
		{"after it, a write", failing.Put([]byte("k"), nil, DefaultSync), ErrBackground},
		{"a key too large", live.Put(make([]byte, MaxKeySize+1), nil, DefaultSync), ErrKeyTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Log(tc.err)
			require.ErrorIs(t, tc.err, tc.is)
			require.True(t, namesOnePackage(tc.err), "%q names a package other than once at its start", tc.err)
		})
	}
}

func openErr(_ *DB, err error) error { return err }
