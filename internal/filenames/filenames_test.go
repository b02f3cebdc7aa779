package filenames

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind Kind
		num  uint64
	}{
		{"LOCK", Lock, 0},
		{"CURRENT", Current, 0},
		{"CURRENT.tmp", Temp, 0},
		{"000012.sst.tmp", Temp, 0},
		{"MANIFEST-000007", Manifest, 7},
		{"MANIFEST-x", Unknown, 0},
		{"000009.log", Log, 9},
		{"12345678.log", Log, 12345678},
		{"000010.sst", Table, 10},
		{"abc.sst", Unknown, 0},
		{"000011.blob", Blob, 11},
		{"000011.blob.tmp", Temp, 0},
		{"x.blob", Unknown, 0},
		{"notes.txt", Unknown, 0},
	} {
		kind, num := Parse(tc.name)
		require.Equal(t, tc.kind, kind, tc.name)
		require.Equal(t, tc.num, num, tc.name)
	}
	for _, path := range []string{LogPath("/d", 9), TablePath("/d", 10), BlobPath("/d", 11), ManifestPath("/d", 7)} {
		kind, num := Parse(filepath.Base(path))
		require.NotEqual(t, Unknown, kind, path)
		require.NotZero(t, num, path)
	}
}
