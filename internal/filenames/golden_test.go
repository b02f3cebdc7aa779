package filenames

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdata/names.txt holds the name of every kind of file a database
// directory holds, one a line, in goldenNames' order. Directories on disk
// hold these names, so a change to how files are named shows as a change to
// the file. Regenerate it, once such a change is meant, with:
//
//	go test ./internal/filenames -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// parsedName is a file name as Parse reads it.
type parsedName struct {
	Kind Kind
	Num  uint64
}

// goldenNames are the cases of names.txt: what Parse must make of each
// name, and the name this package gives a file of that kind and number.
var goldenNames = []struct {
	name   string
	want   parsedName
	format func(num uint64) string
}{
	{"lock", parsedName{Lock, 0}, func(uint64) string { return LockName }},
	{"current", parsedName{Current, 0}, func(uint64) string { return CurrentName }},
	{"manifest", parsedName{Manifest, 7}, func(n uint64) string { return filepath.Base(ManifestPath("/db", n)) }},
	{"manifest past six digits", parsedName{Manifest, 12345678}, func(n uint64) string { return filepath.Base(ManifestPath("/db", n)) }},
	{"log", parsedName{Log, 9}, func(n uint64) string { return filepath.Base(LogPath("/db", n)) }},
	{"log past six digits", parsedName{Log, 1234567}, func(n uint64) string { return filepath.Base(LogPath("/db", n)) }},
	{"table", parsedName{Table, 10}, func(n uint64) string { return filepath.Base(TablePath("/db", n)) }},
	{"table of the largest number", parsedName{Table, math.MaxUint64}, func(n uint64) string { return filepath.Base(TablePath("/db", n)) }},
	// Files being written have no number: the database removes them, or
	// renames them into place, whatever they would be.
	{"CURRENT being written", parsedName{Temp, 0}, func(uint64) string { return CurrentName + ".tmp" }},
	{"table being written", parsedName{Temp, 0}, func(uint64) string { return filepath.Base(TablePath("/db", 10)) + ".tmp" }},
}

func TestGoldenNames(t *testing.T) {
	path := filepath.Join("testdata", "names.txt")
	if *update {
		var b strings.Builder
		for _, tt := range goldenNames {
			b.WriteString(tt.format(tt.want.Num) + "\n")
		}
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run with -update")
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, len(goldenNames), "names in %s", path)
	for i, tt := range goldenNames {
		t.Run(tt.name, func(t *testing.T) {
			kind, num := Parse(lines[i])
			got := parsedName{kind, num}
			require.Equal(t, tt.want, got, "Parse(%q)", lines[i])
			require.Equal(t, lines[i], tt.format(got.Num), "formatted again")
		})
	}
}
