package sstables

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stretchr/testify/require"
)

// Verify reads every data block: a whole table verifies with counts that
// match its properties, and each damaged block is reported, by offset,
// without hiding the blocks after it.
func TestVerify(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	es := randomEntries(rng, 3000)
	path := filepath.Join(t.TempDir(), "t.sst")
	meta := writeTable(t, path, &WriterOptions{BlockSize: 1024, Compression: NoCompression}, es)

	r, err := Open(path, nil)
	require.NoError(t, err)
	index, err := r.Index()
	require.NoError(t, err)
	require.Len(t, index, int(meta.DataBlocks))
	require.Greater(t, len(index), 10)
	for i := 1; i < len(index); i++ {
		require.Equal(t, index[i-1].Block.Offset+index[i-1].Block.Length, index[i].Block.Offset, "blocks are back to back")
	}
	var damage []error
	st, err := r.Verify(func(err error) { damage = append(damage, err) })
	require.NoError(t, err)
	require.Empty(t, damage)
	require.Equal(t, VerifyStats{Blocks: meta.DataBlocks, Bytes: meta.DataSize, Entries: meta.Records, Tombstones: meta.Tombstones}, st)
	require.NoError(t, r.Close())
	_, err = r.Verify(func(error) {})
	require.ErrorIs(t, err, ErrClosed)

	// Flip a byte in the middle of two data blocks.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	damaged := []BlockHandle{index[2].Block, index[7].Block}
	for _, h := range damaged {
		data[h.Offset+h.Length/2] ^= 0x40
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
	r, err = Open(path, nil)
	require.NoError(t, err, "Open reads no data block")
	defer r.Close()
	damage = nil
	st, err = r.Verify(func(err error) { damage = append(damage, err) })
	require.NoError(t, err)
	require.Len(t, damage, 2)
	require.Equal(t, 2, st.Damaged)
	st, err = r.Verify(nil) // counted only
	require.NoError(t, err)
	require.Equal(t, 2, st.Damaged)
	require.Equal(t, meta.DataBlocks, st.Blocks, "every block was read")
	for i, err := range damage {
		require.ErrorIs(t, err, ErrCorruption)
		var ce *base.CorruptionError
		require.True(t, errors.As(err, &ce))
		require.Equal(t, path, ce.Path)
		require.Equal(t, int64(damaged[i].Offset), ce.Offset)
	}
}

// A table that does not open is damage too, and VerifyFile goes on to
// report every other damaged record of the file.
func TestVerifyFileThatDoesNotOpen(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	path := filepath.Join(t.TempDir(), "t.sst")
	writeTable(t, path, &WriterOptions{BlockSize: 1024, Compression: NoCompression}, randomEntries(rng, 2000))
	r, err := Open(path, nil)
	require.NoError(t, err)
	index, err := r.Index()
	require.NoError(t, err)
	require.NoError(t, r.Close())

	var damage []error
	st, err := VerifyFile(path, nil, func(err error) { damage = append(damage, err) })
	require.NoError(t, err)
	require.Empty(t, damage)
	require.Positive(t, st.Entries)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[len(data)-10] ^= 0x01 // the footer
	data[index[3].Block.Offset+index[3].Block.Length/2] ^= 0x01
	require.NoError(t, os.WriteFile(path, data, 0o644))
	damage = nil
	st, err = VerifyFile(path, nil, func(err error) { damage = append(damage, err) })
	require.NoError(t, err)
	require.Len(t, damage, 2, "%v", damage)
	require.Equal(t, 2, st.Damaged)
	var ce *base.CorruptionError
	require.True(t, errors.As(damage[1], &ce))
	require.Equal(t, int64(index[3].Block.Offset), ce.Offset)

	_, err = VerifyFile(filepath.Join(t.TempDir(), "missing.sst"), nil, func(error) {})
	require.ErrorIs(t, err, os.ErrNotExist)
}
