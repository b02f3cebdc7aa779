package simpledb

import (
	"testing"

	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// Zero is the default in every field; a negative value turns off what can
// be turned off, and is refused anywhere else, naming the field, before
// anything is created.
func TestOptionValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(o *Options)
		field string // refused, naming it; "" for accepted
	}{
		{"zero value", func(*Options) {}, ""},
		{"negative RecycledLogs: recycling off", func(o *Options) { o.RecycledLogs = -1 }, ""},
		{"negative BloomBitsPerKey: no filters", func(o *Options) { o.BloomBitsPerKey = -1 }, ""},
		{"negative MemoryBudget", func(o *Options) { o.MemoryBudget = -1 }, "MemoryBudget"},
		{"negative MemstoreSize", func(o *Options) { o.MemstoreSize = -1 }, "MemstoreSize"},
		{"negative MaxImmutableMemstores", func(o *Options) { o.MaxImmutableMemstores = -1 }, "MaxImmutableMemstores"},
		{"negative L0CompactionTrigger", func(o *Options) { o.L0CompactionTrigger = -1 }, "L0CompactionTrigger"},
		{"negative L0StopWritesThreshold", func(o *Options) { o.L0StopWritesThreshold = -1 }, "L0StopWritesThreshold"},
		{"negative BaseLevelSize", func(o *Options) { o.BaseLevelSize = -1 }, "BaseLevelSize"},
		{"negative LevelSizeRatio", func(o *Options) { o.LevelSizeRatio = -1 }, "LevelSizeRatio"},
		{"LevelSizeRatio 1", func(o *Options) { o.LevelSizeRatio = 1 }, "LevelSizeRatio"},
		{"negative TargetTableSize", func(o *Options) { o.TargetTableSize = -1 }, "TargetTableSize"},
		{"negative BlockSize", func(o *Options) { o.BlockSize = -1 }, "BlockSize"},
		{"negative MaxOpenFiles", func(o *Options) { o.MaxOpenFiles = -1 }, "MaxOpenFiles"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			o := &Options{FS: mem, Logger: quietLogger}
			tc.set(o)
			db, err := Open("/db", o)
			if tc.field == "" {
				require.NoError(t, err)
				require.NoError(t, db.Put([]byte("k"), []byte("v"), DefaultSync))
				require.NoError(t, db.Close())
				return
			}
			require.ErrorIs(t, err, ErrInvalidOption)
			require.ErrorContains(t, err, tc.field)
			_, err = mem.Stat("/db")
			require.Error(t, err, "nothing created")
			_, err = Verify("/db", o, nil)
			require.ErrorIs(t, err, ErrInvalidOption)
		})
	}
}
