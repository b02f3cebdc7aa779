package simpledb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// TestDamageMatrix damages every file of a database, one at a time and one
// way at a time (deleted; its tail cut by 1 byte, 7 bytes, half its length;
// a byte flipped; a log zeroed from a record boundary to its end, as a
// write lost in preallocated space leaves it; a table replaced by one of
// the same number and size but another identity, as a table of another
// database or an older backup would be), and opens each damaged copy. Each
// must end one of these ways:
//
//   - intact: it opens, and every acknowledged write reads back (every
//     model key by Get, absent keys absent, a full scan equal to the model);
//   - refused: Open fails with an error matching ErrCorruption that names
//     the damaged file, and leaves the directory exactly as it was (no file
//     removed, changed or added, LOCK included);
//   - on read: it opens, and the reads that touch the damage fail with
//     ErrCorruption while every other read is right. Only damage to a live
//     table may end so: a flipped byte inside a data block is found when
//     the block is read, as in every LSM, since verifying every block at
//     Open would cost reading the whole database;
//   - torn tail, only in the image a power loss left: damage in the active
//     log that no valid record follows looks exactly like the torn end of
//     a write the power loss cut short, so it is dropped; every record
//     before it must be there. After Close nothing is torn, and the same
//     damage must be refused.
//
// Anything else fails: an acknowledged write missing or wrong, a deleted
// key back, a panic, an error that is not ErrCorruption, a directory
// changed by a refused Open. The counts per damage and file kind, and the
// failures by cause, are logged for the README's reliability table.
//
// `make test` damages the closed image with one flipped byte per file and
// a log zeroed from 3 record boundaries; -long damages both images, with
// several flipped bytes per file, and each log zeroed from every record
// boundary of its last chunk.
func TestDamageMatrix(t *testing.T) {
	t.Parallel()
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	closed, crashed := buildDamageImages(t, rng)
	images := []*damageImage{closed}
	flips, zeroings := 1, 3
	if testseed.Long() {
		images = append(images, crashed)
		flips, zeroings = 16, 0 // 0: every boundary
	}

	counts := map[damageCount]int{}
	failures, examples := map[string]int{}, map[string]string{} // by cause
	blobsLeft := 4                                              // of the image's blob files, each damaged every way; all of them with -long
	for _, img := range images {
		t.Logf("%s image: %s", img.name, img.describe())
		// The undamaged image must open intact, or nothing below means much.
		require.Equal(t, outcomeIntact, openDamaged(t, img, img.files, "").outcome, "%s image, undamaged", img.name)
		for _, name := range slices.Sorted(maps.Keys(img.files)) {
			kind := strings.Split(img.kinds[name], " (")[0]
			if kind == kindBlob && !testseed.Long() {
				if blobsLeft == 0 || rng.IntN(3) > 0 {
					continue
				}
				blobsLeft--
			}
			for _, dmg := range damagesFor(t, name, img.kinds[name], img.files[name], flips, zeroings, rng) {
				files := maps.Clone(img.files)
				if dmg.delete {
					delete(files, name)
				} else {
					files[name] = dmg.apply(files[name])
				}
				var res damageResult
				caseName := fmt.Sprintf("%s/%s/%s", img.name, name, dmg.name)
				if !t.Run(caseName, func(t *testing.T) { res = openDamaged(t, img, files, name) }) {
					res.outcome = outcomeFailed
				}
				counts[damageCount{dmg.kind, kind, res.outcome}]++
				for i, cause := range res.causes {
					cause = fmt.Sprintf("%s (%s, %s)", cause, dmg.kind, kind)
					if failures[cause] == 0 {
						examples[cause] = caseName + ": " + strings.ReplaceAll(res.details[i], "\n", "; ")
					}
					failures[cause]++
				}
			}
		}
	}
	// A line each, so that make stress, which keeps only the lines tests
	// log, prints them all.
	t.Log("outcomes per damage and file kind:")
	for _, line := range damageTable(counts) {
		t.Log(line)
	}
	if len(failures) > 0 {
		t.Log("failures by cause (damage, file kind):")
		for _, cause := range slices.Sorted(maps.Keys(failures)) {
			t.Logf("%4d  %s; e.g. %s", failures[cause], cause, examples[cause])
		}
	}
}

// The outcomes of opening a damaged copy, in the order the table shows
// them.
const (
	outcomeIntact  = "intact"
	outcomeRefused = "refused"
	outcomeOnRead  = "on read"
	outcomeTorn    = "torn tail"
	outcomeFailed  = "FAILED"
)

// The kinds of file whose damage has an outcome of its own.
const (
	kindActiveLog = "active log"
	kindTable     = "table" // the suffix of every live table's kind, "L0 table" ...
	kindBlob      = "blob file"
)

// damageImage is a database directory as a backup would copy it: every
// file but LOCK, so that a refused Open must not leave one behind.
type damageImage struct {
	name  string
	files map[string][]byte
	kinds map[string]string // file -> "log", "L1 table", "MANIFEST (21 edits)", ...
	// tornTail: the image is what a power loss left, so damage at the end
	// of the active log may be taken for a torn write.
	tornTail bool
	acked    model        // every acknowledged write
	absent   []string     // keys deleted or never written
	ops      []workloadOp // every batch, in order
	active   int          // ops[active:] are in the active log
}

func (img *damageImage) describe() string {
	n := map[string]int{}
	for _, kind := range img.kinds {
		n[kind]++
	}
	var parts []string
	for _, kind := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d %s", n[kind], kind))
	}
	return fmt.Sprintf("%s; %d batches (%d in the active log), %d keys, %d absent",
		strings.Join(parts, ", "), len(img.ops), len(img.ops)-img.active, len(img.acked), len(img.absent))
}

// flushGate holds back flushes: while held, creating a table blocks, so
// that full memstores stay immutable and their logs stay needed.
type flushGate struct {
	mu      sync.Mutex
	open    chan struct{} // nil: not held
	waiting atomic.Int32  // creates blocked
}

func (g *flushGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = make(chan struct{})
}

func (g *flushGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.open)
	g.open = nil
}

// MaybeError implements errorfs.Injector: it fails nothing, but blocks a
// table's creation while the gate is held.
func (g *flushGate) MaybeError(op errorfs.Op, path string) error {
	if op != errorfs.OpCreate || !strings.HasSuffix(path, ".sst.tmp") {
		return nil
	}
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	if open != nil {
		g.waiting.Add(1)
		<-open
		g.waiting.Add(-1)
	}
	return nil
}

// damageOptions make small memstores and tables, so that a few thousand
// writes fill every kind of file. Compaction runs only when the test asks,
// so that the levels stay as built and no compaction races a damaged
// copy's reads.
func damageOptions() *Options {
	o := smallOptions()
	o.MemstoreSize = 96 << 10 // the memstore's arena takes 64 KiB at a time
	o.MaxImmutableMemstores = 3
	o.TargetTableSize = 8 << 10
	o.BlockSize = 512
	o.DisableAutoCompaction = true
	o.Logger = quietLogger
	o.BlobThreshold = 128 // the longer values go to blob files, which take damage too
	return o
}

// buildDamageImages writes a database with tables in L0, L1 and L2 that
// hold overwritten and deleted versions a live snapshot keeps, a manifest
// of many edits, and three logs: two of immutable memstores whose flush is
// held back, and the active one. Every write is synced. It returns the
// directory after Close, and as a power loss before Close leaves it.
func buildDamageImages(t *testing.T, rng *rand.Rand) (closed, crashed *damageImage) {
	mem := vfs.NewMem()
	gate := &flushGate{}
	opts := damageOptions()
	opts.FS = errorfs.Wrap(mem, gate)
	db, err := Open("/db", opts)
	require.NoError(t, err)

	acked, written := model{}, map[string]bool{}
	var ops []workloadOp
	logs := []uint64{} // the log each batch went to
	// write writes a batch of puts and deletes, each key once, in key
	// order, so that the files depend on the seed alone.
	write := func() {
		op := workloadOp{puts: map[string]string{}, sync: true}
		for range 1 + rng.IntN(4) {
			k := fmt.Sprintf("key-%04d", rng.IntN(400))
			if _, dup := op.puts[k]; dup || slices.Contains(op.deletes, k) {
				continue
			}
			written[k] = true
			if rng.IntN(5) == 0 {
				op.deletes = append(op.deletes, k)
			} else {
				op.puts[k] = string(randomValue(rng, []byte(k), uint64(len(ops)), 20+rng.IntN(150)))
			}
		}
		b := db.NewBatch()
		for _, k := range slices.Sorted(maps.Keys(op.puts)) {
			require.NoError(t, b.Put([]byte(k), []byte(op.puts[k])))
		}
		for _, k := range op.deletes {
			require.NoError(t, b.Delete([]byte(k)))
		}
		require.NoError(t, db.Write(b, DefaultSync))
		op.apply(acked)
		ops = append(ops, op)
		db.mu.Lock()
		logs = append(logs, db.mu.memstores.active().logNum)
		db.mu.Unlock()
	}
	// rounds writes n batches then flushes, rounds times: a table and a
	// manifest edit each. A memstore that fills first is flushed before
	// the next write, so that file numbers depend on the seed alone.
	rounds := func(rounds, n int) {
		for range rounds {
			for range n {
				write()
				db.mu.Lock()
				for db.mu.memstores.immutable() > 0 && db.mu.failure.err() == nil {
					db.cond.Wait()
				}
				db.mu.Unlock()
			}
			require.NoError(t, db.Flush())
		}
	}
	// compact merges the first n tables of level into the next one, or
	// moves the one table, as a background compaction would; Compact would
	// merge everything into the deepest level.
	compact := func(level, n int) {
		db.mu.Lock()
		defer db.mu.Unlock()
		require.GreaterOrEqual(t, len(db.mu.versions.current().levels[level]), n)
		c := newCompaction(db.mu.versions.current(), level, db.mu.versions.current().levels[level][:n])
		c.move = c.trivialMove(&db.opts)
		require.NoError(t, db.runCompaction(c))
	}

	rounds(3, 60)
	snap := db.NewSnapshot() // keeps the versions it sees through every flush and compaction below
	rounds(5, 60)
	compact(0, 8)
	compact(1, 1) // L2, which is empty: a trivial move
	require.EqualValues(t, 1, db.Stats().TrivialMoves)
	rounds(6, 40)
	compact(0, 6)
	rounds(3, 40) // L0

	// Held flushes leave full memstores immutable: each keeps its log.
	gate.hold()
	for i := 0; ; i++ {
		require.Less(t, i, 10000, "the memstores never filled")
		write()
		db.mu.Lock()
		imm := db.mu.memstores.immutable()
		db.mu.Unlock()
		if imm == 1 {
			// The first one's flush takes its table's number before it
			// blocks: wait for it, so that numbers stay deterministic.
			for gate.waiting.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		if imm == 2 {
			break
		}
	}
	for range 20 {
		write() // more records in the active log
	}
	require.NoError(t, snap.Release())

	kinds := map[string]string{}
	db.mu.Lock()
	for level, tables := range db.mu.versions.current().levels {
		for _, tb := range tables {
			kinds[fmt.Sprintf("%06d.sst", tb.Num)] = fmt.Sprintf("L%d %s", level, kindTable)
		}
	}
	for num := range db.mu.versions.current().blobs {
		kinds[fmt.Sprintf("%06d.blob", num)] = kindBlob
	}
	for _, mt := range db.mu.memstores.imm {
		kinds[fmt.Sprintf("%06d.log", mt.logNum)] = "log"
	}
	kinds[fmt.Sprintf("%06d.log", db.mu.memstores.active().logNum)] = kindActiveLog
	active := slices.Index(logs, db.mu.memstores.active().logNum)
	db.mu.Unlock()
	kinds[filenames.CurrentName] = filenames.CurrentName
	var absent []string
	for k := range written {
		if _, ok := acked[k]; !ok {
			absent = append(absent, k)
		}
	}
	absent = append(absent, "key-0400", "key-9999", "a", "zzz") // never written

	image := func(name string, fsys vfs.FS) *damageImage {
		img := &damageImage{name: name, files: readDirFiles(t, fsys, "/db"), kinds: map[string]string{},
			acked: maps.Clone(acked), absent: absent, ops: ops, active: active}
		delete(img.files, filenames.LockName)
		for file := range img.files {
			kind, ok := kinds[file]
			switch fk, _ := filenames.Parse(file); {
			case ok:
			case fk == filenames.Manifest:
				kind = fmt.Sprintf("MANIFEST (%d edits)", len(readRecords(t, img.files[file])))
			case fk == filenames.Log:
				kind = "obsolete log"
			case fk == filenames.Table:
				kind = "obsolete table"
			default:
				kind = "other"
			}
			img.kinds[file] = kind
		}
		return img
	}
	crashed = image("crashed", mem.CrashClone(vfs.CrashOptions{}))
	crashed.tornTail = true

	// Close gives up the held flush once it is closing: let the flush go
	// only then, so that the closed image keeps the three logs too.
	closeErr := make(chan error, 1)
	go func() { closeErr <- db.Close() }()
	for !db.closed.Load() {
		time.Sleep(time.Millisecond)
	}
	gate.release()
	require.NoError(t, <-closeErr)
	closed = image("closed", mem)
	for _, img := range []*damageImage{closed, crashed} {
		n := map[string]int{}
		for _, kind := range img.kinds {
			n[kind]++
		}
		require.Equal(t, 2, n["log"], "%s image: two logs held back", img.name)
		require.Equal(t, 1, n[kindActiveLog], "%s image: the active log", img.name)
		for level := range 3 {
			require.Positive(t, n[fmt.Sprintf("L%d %s", level, kindTable)], "%s image: tables in L%d", img.name, level)
		}
	}
	return closed, crashed
}

// readDirFiles returns the contents of every file in dir.
func readDirFiles(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fsys.List(dir)
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, name := range names {
		f, err := fsys.Open(dir + "/" + name)
		require.NoError(t, err)
		files[name], err = io.ReadAll(f)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	return files
}

// writeDirFiles creates dir on a new MemFS holding files, all durable.
func writeDirFiles(t *testing.T, dir string, files map[string][]byte) *vfs.MemFS {
	t.Helper()
	fsys := vfs.NewMem()
	require.NoError(t, fsys.MkdirAll(dir, 0o755))
	for name, data := range files {
		f, err := fsys.Create(dir + "/" + name)
		require.NoError(t, err)
		_, err = f.Write(data)
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
	}
	require.NoError(t, fsys.SyncDir(dir))
	return fsys
}

// readRecords returns the records of a recordio file up to its end or its
// first damage.
func readRecords(t *testing.T, data []byte) [][]byte {
	fsys := writeDirFiles(t, "/r", map[string][]byte{"f": data})
	r, err := recordio.Open("/r/f", &recordio.ReaderOptions{FS: fsys, NoMmap: true})
	if err != nil {
		return nil
	}
	defer r.Close()
	var records [][]byte
	for {
		rec, err := r.Next()
		if err != nil {
			return records
		}
		records = append(records, bytes.Clone(rec))
	}
}

// fileDamage is one way to damage a file.
type fileDamage struct {
	kind, name string // kind groups the counts: "flip" for every flipped offset
	delete     bool
	apply      func(data []byte) []byte
}

// damagesFor returns the damages for a file of data of the given kind:
// deleting it, cutting its tail by 1 byte, 7 bytes and half its length,
// and flipping a byte at flips random offsets; for a log, zeroing it from
// zeroings record boundaries of its last chunk (0: from every one) to its
// end; for a table, replacing it by another of the same size.
func damagesFor(t *testing.T, name, kind string, data []byte, flips, zeroings int, rng *rand.Rand) []fileDamage {
	ds := []fileDamage{{kind: "delete", name: "delete", delete: true}}
	for _, cut := range []struct {
		kind string
		n    int
	}{{"cut 1 byte", 1}, {"cut 7 bytes", 7}, {"cut half", len(data) - len(data)/2}} {
		if cut.n > 0 && cut.n <= len(data) {
			keep := len(data) - cut.n
			ds = append(ds, fileDamage{kind: cut.kind, name: fmt.Sprintf("cut to %d of %d", keep, len(data)),
				apply: func(data []byte) []byte { return slices.Clone(data[:keep]) }})
		}
	}
	for range flips {
		if len(data) == 0 {
			break
		}
		off, mask := rng.IntN(len(data)), byte(1+rng.IntN(255))
		ds = append(ds, fileDamage{kind: "flip", name: fmt.Sprintf("flip byte %d of %d", off, len(data)),
			apply: func(data []byte) []byte {
				data = slices.Clone(data)
				data[off] ^= mask
				return data
			}})
	}
	switch {
	case strings.HasSuffix(kind, "log"):
		bounds := recordBoundaries(t, data)
		bounds = slices.DeleteFunc(bounds, func(off int64) bool { return off < int64(len(data))-logChunk })
		if zeroings > 0 && len(bounds) > zeroings {
			picked := make([]int64, zeroings)
			for i := range picked {
				picked[i] = bounds[rng.IntN(len(bounds))]
			}
			bounds = picked
		}
		for _, off := range bounds {
			ds = append(ds, fileDamage{kind: "zero tail", name: fmt.Sprintf("zeros from %d of %d", off, len(data)),
				apply: func(data []byte) []byte {
					data = slices.Clone(data)
					clear(data[off:])
					return data
				}})
		}
	case strings.HasSuffix(kind, kindTable):
		foreign := foreignTable(t, data, damageOptions().tableWriterOptions(), rng)
		ds = append(ds, fileDamage{kind: "foreign", name: "another table of the same size",
			apply: func([]byte) []byte { return foreign }})
	case kind == kindBlob:
		foreign := foreignBlob(t, name, data, rng)
		ds = append(ds, fileDamage{kind: "foreign", name: "another blob file of the same size",
			apply: func([]byte) []byte { return foreign }})
	}
	return ds
}

// recordBoundaries returns the offsets where the records of a recordio
// file start, up to its end or its first damage.
func recordBoundaries(t *testing.T, data []byte) []int64 {
	fsys := writeDirFiles(t, "/r", map[string][]byte{"f": data})
	r, err := recordio.Open("/r/f", &recordio.ReaderOptions{FS: fsys, NoMmap: true})
	if err != nil {
		return nil
	}
	defer r.Close()
	var offs []int64
	for {
		if _, err := r.Next(); err != nil {
			return offs
		}
		offs = append(offs, r.Offset())
	}
}

// damageResult is how a damaged copy ended: an outcome, and for a failed
// one each promise it broke (a short cause, for grouping) with details.
type damageResult struct {
	outcome string
	causes  []string
	details []string
}

// fail records a broken promise and fails t.
func (r *damageResult) fail(t *testing.T, cause, format string, args ...any) {
	t.Helper()
	detail := fmt.Sprintf(format, args...)
	t.Errorf("%s: %s", cause, detail)
	r.outcome = outcomeFailed
	r.causes = append(r.causes, cause)
	r.details = append(r.details, detail)
}

// openDamaged opens a copy of files, whose file is damaged ("" for none),
// and returns how it ended, failing t if in none of the allowed ways.
func openDamaged(t *testing.T, img *damageImage, files map[string][]byte, file string) damageResult {
	kind := img.kinds[file]
	fsys := writeDirFiles(t, "/db", files)
	opts := damageOptions()
	opts.FS = fsys
	var db *DB
	res := damageResult{}
	// Verify runs first, on the same files: it must change nothing, and
	// agree with what Open and the reads find (checked on return).
	var report *VerifyReport
	if err := catchPanic(func() error {
		var err error
		report, err = Verify("/db", opts, nil)
		return err
	}); err != nil {
		res.fail(t, "Verify failed", "%v", err)
		return res
	}
	if after := readDirFiles(t, fsys, "/db"); !maps.EqualFunc(files, after, bytes.Equal) {
		res.fail(t, "Verify changed the directory", "%v", slices.Sorted(maps.Keys(after)))
	}
	defer func() { res.checkVerify(t, report, file) }()
	err := catchPanic(func() error {
		var err error
		db, err = Open("/db", opts)
		return err
	})
	if err != nil {
		res.outcome = outcomeRefused
		switch {
		case errors.Is(err, errPanic):
			res.fail(t, "Open panicked", "%v", err)
			return res
		case !errors.Is(err, ErrCorruption):
			res.fail(t, "refused with an error that is not ErrCorruption", "%v", err)
		case !strings.Contains(err.Error(), file):
			res.fail(t, "refused with an error that does not name the file", "%v", err)
		case !namesOnePackage(err):
			res.fail(t, "refused with an error that names a package other than once at its start", "%v", err)
		}
		after := readDirFiles(t, fsys, "/db")
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if got, found := after[name]; !found {
				res.fail(t, "refused, but removed a file", "%s, after %v", name, err)
			} else if !bytes.Equal(files[name], got) {
				res.fail(t, "refused, but changed a file", "%s, after %v", name, err)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(after)) {
			if _, found := files[name]; !found {
				res.fail(t, "refused, but left "+name+" behind", "after %v", err)
			}
		}
		return res
	}
	defer db.Close()

	// A torn tail may have dropped the records from the damaged one on;
	// the state must then be that after a prefix of the batches that
	// holds every record before it.
	want, outcome := img.acked, outcomeIntact
	if img.tornTail && kind == kindActiveLog && files[file] != nil {
		from := img.active + max(len(readRecords(t, files[file]))-1, 0) // the first record is the log's identity
		if got, err := scanAll(db); err == nil && !maps.Equal(got, img.acked) {
			state := model{}
			for _, op := range img.ops[:from] {
				op.apply(state)
			}
			if k := matchPrefix(got, state, img.ops, from); k >= 0 {
				want, outcome = got, outcomeTorn
			}
		}
	}
	wrong, reported, err := checkReads(db, want, img)
	if err != nil {
		res.fail(t, "a read panicked", "%v", err)
		return res
	}
	res.outcome = outcome
	if reported != nil {
		res.outcome = outcomeOnRead
	}
	if len(wrong) > 0 {
		res.fail(t, "opened with acknowledged writes missing or wrong", "%d of %d reads, such as:\n%s",
			len(wrong), len(img.acked)+len(img.absent)+1, strings.Join(wrong[:min(len(wrong), 3)], "\n"))
	}
	if reported != nil {
		// Only a table's data, and a blob file's values, are checked as
		// they are read; damage anywhere else must be found by Open.
		if kind != kindBlob && (!strings.HasPrefix(kind, "L") || !strings.HasSuffix(kind, kindTable)) {
			res.fail(t, "opened, and damage to a "+kind+" reported only on read", "%v", reported)
		} else if !strings.Contains(reported.Error(), file) {
			res.fail(t, "a read reported damage without naming the file", "%v", reported)
		} else if !namesOnePackage(reported) {
			res.fail(t, "a read reported damage naming a package other than once at its start", "%v", reported)
		}
	}
	return res
}

// checkVerify checks Verify's report against the outcome of Open and the
// reads: damage that refused the Open, or that a read reported, is damage
// Verify reports too, naming the file; a whole database, or one whose
// damage is a torn tail, has none.
func (r *damageResult) checkVerify(t *testing.T, report *VerifyReport, file string) {
	if report == nil {
		return
	}
	var named bool
	for _, err := range report.Damage {
		named = named || strings.Contains(err.Error(), file)
	}
	switch {
	case r.outcome == outcomeRefused || r.outcome == outcomeOnRead:
		if !named {
			r.fail(t, "Verify missed damage that Open or a read found", "reported %v", report.Damage)
		}
	case file == "" || r.outcome == outcomeTorn:
		if len(report.Damage) > 0 {
			r.fail(t, "Verify reported damage in a database that opens whole", "%v", report.Damage)
		}
	}
}

// scanAll returns what a full scan of db returns.
func scanAll(db *DB) (model, error) {
	it, err := db.NewIterator(nil, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	m := model{}
	for k, v := range it.All() {
		m[string(k)] = string(v)
	}
	return m, it.Err()
}

// checkReads reads every key of want and img.absent by Get, and all of db
// by a scan. It returns the reads that disagree with want (other than by
// ErrCorruption), the first ErrCorruption a read reported, and a panic as
// an error.
func checkReads(db *DB, want model, img *damageImage) (wrong []string, reported, err error) {
	read := func(what string, err error) {
		switch {
		case err == nil:
		case errors.Is(err, ErrCorruption):
			if reported == nil {
				reported = err
			}
		default:
			wrong = append(wrong, fmt.Sprintf("%s: %v", what, err))
		}
	}
	keys := slices.Sorted(maps.Keys(want))
	err = catchPanic(func() error {
		for _, k := range keys {
			v, err := db.Get([]byte(k))
			read("Get "+k, err)
			if err == nil && string(v) != want[k] {
				wrong = append(wrong, fmt.Sprintf("Get %s: %.20q, want %.20q", k, v, want[k]))
			}
		}
		for _, k := range slices.Concat(img.absent, slices.Collect(maps.Keys(img.acked))) {
			if _, ok := want[k]; ok {
				continue
			}
			if v, err := db.Get([]byte(k)); err == nil {
				wrong = append(wrong, fmt.Sprintf("Get %s: %.20q, want it absent", k, v))
			} else if err != ErrNotFound {
				read("Get "+k, err)
			}
		}
		it, err := db.NewIterator(nil, nil)
		if err != nil {
			read("NewIterator", err)
			return nil
		}
		defer it.Close()
		i := 0
		for k, v := range it.All() {
			if i >= len(keys) || string(k) != keys[i] || string(v) != want[keys[i]] {
				wrong = append(wrong, fmt.Sprintf("scan %d: %s=%.20q, want %s", i, k, v, keys[min(i, len(keys)-1)]))
				return nil
			}
			i++
		}
		read("scan", it.Err())
		if it.Err() == nil && i < len(keys) {
			wrong = append(wrong, fmt.Sprintf("scan: ended after %d of %d keys", i, len(keys)))
		}
		return nil
	})
	return wrong, reported, err
}

// errPanic is what catchPanic returns for a panic.
var errPanic = errors.New("panic")

// catchPanic runs f, turning a panic into an error with its stack: a
// panic would end the whole matrix, not just its case.
func catchPanic(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", errPanic, p, debug.Stack())
		}
	}()
	return f()
}

// damageCount is a cell of the outcome table.
type damageCount struct{ damage, file, outcome string }

// damageTable formats the counts: a line per damage and file kind, a
// column per outcome.
func damageTable(counts map[damageCount]int) []string {
	type row struct{ damage, file string }
	rows := map[row]map[string]int{}
	for c, n := range counts {
		r := row{c.damage, c.file}
		if rows[r] == nil {
			rows[r] = map[string]int{}
		}
		rows[r][c.outcome] += n
	}
	order := []string{"delete", "cut 1 byte", "cut 7 bytes", "cut half", "flip", "zero tail", "foreign"}
	keys := slices.SortedFunc(maps.Keys(rows), func(a, b row) int {
		if d := slices.Index(order, a.damage) - slices.Index(order, b.damage); d != 0 {
			return d
		}
		return strings.Compare(a.file, b.file)
	})
	outcomes := []string{outcomeIntact, outcomeRefused, outcomeOnRead, outcomeTorn, outcomeFailed}
	header := fmt.Sprintf("%-12s %-14s", "damage", "file")
	for _, o := range outcomes {
		header += fmt.Sprintf(" %9s", o)
	}
	lines := []string{header}
	for _, r := range keys {
		line := fmt.Sprintf("%-12s %-14s", r.damage, r.file)
		for _, o := range outcomes {
			line += fmt.Sprintf(" %9d", rows[r][o])
		}
		lines = append(lines, line)
	}
	return lines
}
