package simpledb

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stretchr/testify/require"
)

// formatsDir holds one fixture per earlier on-disk format: NAME/db, a
// database written by the code of that format and left with writes only
// in its log, and NAME/expected.json, what it must read. See its README.
const formatsDir = "testdata/formats"

// formatFixture is a fixture's expected.json.
type formatFixture struct {
	LogFormat   uint64 `json:"log_format"`
	TableFormat uint32 `json:"table_format"`
	Merger      string `json:"merger"`
	// State is every key and its value, in key order, both in base64;
	// Absent the keys written and deleted since, in base64.
	State  [][2]string `json:"state"`
	Absent []string    `json:"absent"`
}

// fixtureEntry is a key and its value, as a read returns them.
type fixtureEntry struct{ key, value string }

// Every fixture opens with today's code, reads as its writer left it,
// takes today's writes, and compacts into today's formats, which read the
// same after a reopen. A fixture joins by being added under formatsDir.
func TestFormatCompatibility(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(formatsDir, "*", "expected.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "no fixtures under %s", formatsDir)
	current := currentTableFormat(t)
	for _, path := range paths {
		name := filepath.Base(filepath.Dir(path))
		t.Run(name, func(t *testing.T) {
			fx, want, absent := loadFormatFixture(t, path)
			// Never in place: Open writes a manifest and a log, and
			// compaction replaces the tables.
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(filepath.Dir(path), "db"))))

			// The fixture is of the formats it claims.
			state := replayManifest(t, dir)
			require.Equal(t, fx.LogFormat, state.LogFormat, "the fixture's log format")
			require.Equal(t, fx.Merger, state.Merger, "the fixture's merger")
			require.Equal(t, []uint32{fx.TableFormat}, tableFormats(t, dir, state), "the fixture's table formats")
			requireVerified(t, dir)

			opts := &Options{Logger: quietLogger, Merger: shippedMerger(t, state.Merger)}
			db, err := Open(dir, opts)
			require.NoError(t, err)
			requireFixtureState(t, db, want, absent, "as written")

			// Today's writes: a new key, and a range deletion over keys
			// of every layer.
			keys := slices.Sorted(maps.Keys(want))
			deleted := keys[len(keys)/3 : len(keys)/3+60]
			require.NoError(t, db.Put([]byte("format-compat/today"), []byte("written by today's code"), Sync))
			require.NoError(t, db.DeleteRange([]byte(deleted[0]), []byte(keys[len(keys)/3+60]), Sync))
			want["format-compat/today"] = "written by today's code"
			for _, k := range deleted {
				delete(want, k)
				absent = append(absent, k)
			}
			requireFixtureState(t, db, want, absent, "with today's writes")

			require.NoError(t, db.Compact())
			require.NoError(t, db.Close())
			db, err = Open(dir, opts)
			require.NoError(t, err)
			requireFixtureState(t, db, want, absent, "compacted and reopened")
			require.NoError(t, db.Close())

			state = replayManifest(t, dir)
			require.Equal(t, uint64(logformat.Current), state.LogFormat, "the log format after the upgrade")
			require.Equal(t, []uint32{current}, tableFormats(t, dir, state), "the table formats after the upgrade")
			requireVerified(t, dir)
		})
	}
}

// loadFormatFixture reads a fixture's expected.json: its state as a
// model, and its absent keys.
func loadFormatFixture(t *testing.T, path string) (formatFixture, model, []string) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var fx formatFixture
	require.NoError(t, json.Unmarshal(data, &fx))
	decode := func(s string) string {
		b, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		return string(b)
	}
	want := model{}
	for _, kv := range fx.State {
		want[decode(kv[0])] = decode(kv[1])
	}
	require.Len(t, want, len(fx.State), "keys repeated in %s", path)
	var absent []string
	for _, k := range fx.Absent {
		absent = append(absent, decode(k))
		require.NotContains(t, want, absent[len(absent)-1], "a key both present and absent in %s", path)
	}
	return fx, want, absent
}

// shippedMerger returns the shipped merger a manifest names, nil for none.
func shippedMerger(t *testing.T, name string) *Merger {
	for _, m := range []*Merger{Uint64AddMerger, AppendMerger} {
		if m.Name == name {
			return m
		}
	}
	require.Empty(t, name, "the manifest names a merger that simpledb does not ship")
	return nil
}

func replayManifest(t *testing.T, dir string) *manifest.State {
	name, err := manifest.ReadCurrent(vfs.Default, dir)
	require.NoError(t, err)
	state, err := manifest.Replay(vfs.Default, filepath.Join(dir, name), sstables.Bytewise.Name)
	require.NoError(t, err)
	return state
}

// tableFormats returns the formats of the tables state names, each once,
// in order.
func tableFormats(t *testing.T, dir string, state *manifest.State) []uint32 {
	var formats []uint32
	for _, level := range state.Levels {
		for num := range level {
			r, err := sstables.Open(filenames.TablePath(dir, num), &sstables.ReaderOptions{NoMmap: true})
			require.NoError(t, err)
			formats = append(formats, r.Metadata().FormatVersion)
			require.NoError(t, r.Close())
		}
	}
	slices.Sort(formats)
	return slices.Compact(formats)
}

// currentTableFormat returns the format of the tables today's code writes:
// that of a new database's table.
func currentTableFormat(t *testing.T) uint32 {
	dir := t.TempDir()
	db, err := Open(dir, &Options{Logger: quietLogger})
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("k"), []byte("v"), Sync))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Close())
	formats := tableFormats(t, dir, replayManifest(t, dir))
	require.Len(t, formats, 1)
	return formats[0]
}

func requireVerified(t *testing.T, dir string) {
	report, err := Verify(dir, &Options{Logger: quietLogger}, nil)
	require.NoError(t, err)
	require.Empty(t, report.Damage)
}

// requireFixtureState requires that db holds want exactly: every key by
// Get, no absent key by Get, and want alone by a forward and a backward
// scan. A difference is reported by key and value length, not by the
// values, some of which are 40 KiB.
func requireFixtureState(t *testing.T, db *DB, want model, absent []string, when string) {
	t.Helper()
	for _, k := range absent {
		_, err := db.Get([]byte(k))
		require.ErrorIs(t, err, ErrNotFound, "%s: Get(%q) of a deleted key", when, k)
	}
	var sorted []fixtureEntry
	for _, k := range slices.Sorted(maps.Keys(want)) {
		sorted = append(sorted, fixtureEntry{k, want[k]})
		got, err := db.Get([]byte(k))
		require.NoError(t, err, "%s: Get(%q)", when, k)
		requireSameEntry(t, sorted[len(sorted)-1], fixtureEntry{k, string(got)}, "%s: Get(%q)", when, k)
	}

	it, err := db.NewIterator(nil, nil)
	require.NoError(t, err)
	defer it.Close()
	var forward, backward []fixtureEntry
	for k, v := range it.All() {
		forward = append(forward, fixtureEntry{string(k), string(v)})
	}
	require.NoError(t, it.Err())
	for k, v := range it.Backward() {
		backward = append(backward, fixtureEntry{string(k), string(v)})
	}
	require.NoError(t, it.Err())
	slices.Reverse(backward)
	for _, scan := range []struct {
		name string
		got  []fixtureEntry
	}{{"forward scan", forward}, {"backward scan", backward}} {
		for i := range min(len(sorted), len(scan.got)) {
			requireSameEntry(t, sorted[i], scan.got[i], "%s: %s, entry %d", when, scan.name, i)
		}
		require.Equal(t, len(sorted), len(scan.got), "%s: %s: entries", when, scan.name)
	}
}

func requireSameEntry(t *testing.T, want, got fixtureEntry, format string, args ...any) {
	t.Helper()
	if want != got {
		t.Fatalf(format+": got %q (a %d-byte value), want %q (a %d-byte value)",
			append(args, got.key, len(got.value), want.key, len(want.value))...)
	}
}
