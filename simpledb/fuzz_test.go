package simpledb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/sstables"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// FuzzBatch fuzzes the decoder of log records: any bytes either fail to
// decode or yield ops that, encoded again, decode to the same ops. (Bytes
// and re-encoding may differ: a varint can be written in more than one
// way.)
func FuzzBatch(f *testing.F) {
	var b Batch
	b.Put([]byte("key"), []byte("value"))
	b.Delete([]byte("gone"))
	b.Put([]byte("empty"), nil)
	b.DeleteRange([]byte("a"), []byte("c"))
	b.DeleteRange(nil, []byte("b"))
	b.DeleteRange([]byte("x"), nil)
	b.Merge([]byte("counter"), []byte("+1"))
	b.setSeq(42)
	f.Add(b.data)
	type op struct {
		seq        uint64
		kind       base.Kind
		key, value string
	}
	decode := func(data []byte) ([]op, error) {
		var ops []op
		_, _, err := logformat.Decode(logformat.Current, data, func(seq uint64, kind base.Kind, key, value []byte) error {
			ops = append(ops, op{seq, kind, string(key), string(value)})
			return nil
		})
		return ops, err
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := decode(data)
		if err != nil || len(ops) == 0 {
			return
		}
		var again Batch
		for _, o := range ops {
			switch o.kind {
			case base.KindSet:
				again.Put([]byte(o.key), []byte(o.value))
			case base.KindRangeDelete:
				again.DeleteRange(openIfEmpty(o.key), openIfEmpty(o.value))
			case base.KindMerge:
				again.Merge([]byte(o.key), []byte(o.value))
			default:
				again.Delete([]byte(o.key))
			}
		}
		again.setSeq(ops[0].seq)
		got, err := decode(again.data)
		if err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		if !slices.Equal(got, ops) {
			t.Fatalf("batch does not round-trip: %v, then %v", ops, got)
		}
	})
}

// openIfEmpty returns a range deletion's bound as decoded from the log,
// which writes an open bound as an empty one, for Batch.DeleteRange, for
// which only nil is open.
func openIfEmpty(bound string) []byte {
	if bound == "" {
		return nil
	}
	return []byte(bound)
}

// FuzzVersionEdit fuzzes the decoder of manifest records: an edit that
// decodes must encode and decode to the same edit.
func FuzzVersionEdit(f *testing.F) {
	e := manifest.Edit{Comparator: sstables.Bytewise.Name, Merger: "strata.uint64add", LogNum: 7, NextFileNum: 12, LastSeq: 99, LogFormat: logformat.Current,
		Logs:    []manifest.LogInfo{{Num: 7, Size: 4096}, {Num: 11}},
		Deleted: []manifest.LevelTable{{Level: 1, Info: manifest.TableInfo{Num: 3}}},
		Added:   []manifest.LevelTable{{Level: 2, Info: manifest.TableInfo{Num: 9, Size: 100, Smallest: []byte("a"), Largest: []byte("z"), SmallestSeq: 1, LargestSeq: 50}}}}
	f.Add(e.Encode())
	e.Added[0].Info.ID, e.Added[0].Info.BlobRefs = 0x1234, []manifest.BlobRef{{Num: 8, Values: 3, ValueBytes: 12288}}
	e.AddedBlobs, e.DeletedBlobs = []manifest.BlobFileInfo{{Num: 8, Size: 12400, Values: 3, ValueBytes: 12288, ID: 0x5678}}, []uint64{4}
	f.Add(e.Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := manifest.DecodeEdit(data)
		if err != nil {
			return
		}
		again, err := manifest.DecodeEdit(e.Encode())
		if err != nil {
			t.Fatalf("re-encoded edit does not decode: %v", err)
		}
		if !bytes.Equal(again.Encode(), e.Encode()) {
			t.Fatal("edit does not round-trip")
		}
	})
}

// FuzzCurrent fuzzes the reading of CURRENT: any bytes either name a
// manifest or give ErrCorruption, and nothing panics. It fuzzes the file
// name parser too: a name it reads as a numbered file of some kind is
// that kind and number again when written out canonically.
func FuzzCurrent(f *testing.F) {
	fsys := vfs.NewMem()
	require.NoError(f, fsys.MkdirAll("/db", 0o755))
	require.NoError(f, manifest.WriteCurrent(fsys, "/db", "MANIFEST-000007"))
	file, err := fsys.Open("/db/" + filenames.CurrentName)
	require.NoError(f, err)
	valid, err := io.ReadAll(file)
	require.NoError(f, err)
	file.Close()
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add([]byte{})
	f.Add([]byte("MANIFEST-000007"))
	f.Fuzz(func(t *testing.T, data []byte) {
		canonical := map[filenames.Kind]func(string, uint64) string{filenames.Log: filenames.LogPath, filenames.Table: filenames.TablePath, filenames.Manifest: filenames.ManifestPath}
		if kind, num := filenames.Parse(string(data)); canonical[kind] != nil {
			again := filepath.Base(canonical[kind]("/db", num))
			if k, n := filenames.Parse(again); k != kind || n != num {
				t.Fatalf("%q parses as %v %d, its canonical name %q as %v %d", data, kind, num, again, k, n)
			}
		}

		fsys := vfs.NewMem()
		fsys.MkdirAll("/db", 0o755)
		w, err := fsys.Create("/db/" + filenames.CurrentName)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
		name, err := manifest.ReadCurrent(fsys, "/db")
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("CURRENT %q: %v, not ErrCorruption", data, err)
			}
			return
		}
		if kind, _ := filenames.Parse(name); kind != filenames.Manifest {
			t.Fatalf("CURRENT %q names %q, not a manifest", data, name)
		}
	})
}

// FuzzDB decodes a byte string into operations (put, delete, delete
// range, batch, get, scan both ways, random walks that switch direction,
// prefix scans,
// snapshot, flush, compact, checkpoint, reopen, now and then read-only
// first) on an in-memory database and checks every result against a map
// model.
func FuzzDB(f *testing.F) {
	f.Add([]byte("p1ap2bd1g1s0fcrg2"))
	f.Add([]byte("b3p1xp2yd1Sg1p1zfcg1Rg1"))
	// Puts, a snapshot, more writes, a flush, a walk, a walk of the
	// snapshot, a compaction, a reopen, a bounded walk.
	f.Add([]byte("\x00\x01a\x03\x00\x02b\x03\x00\x03c\x03\x06\x00\x04d\x03\x01\x02\x08\x00" +
		"\x05\x01\x00\x00\x07\x07\x01\x03\x01\x01\x00\x05\x08\x01\x09\x05\x03\x02\x00\x01\x05\x09"))
	// Puts, range deletions, a flush, a compaction, reads and scans.
	f.Add([]byte("\x00\x01a\x03\x00\x02b\x03\x00\x05c\x03\x0a\x01\x01\x01\x04\x08\x00\x03\x02" +
		"\x05\x00\x08\x01\x03\x03\x0a\x00\x01\x09\x05\x00\x03\x05"))
	// Deletions, each followed by a merge of the key (op 12), which folds
	// into the tombstone's entry; then a flush and reads.
	f.Add([]byte("\x0c\x01\x00\x0c\x01\x00\x0c\x02\x01\x0c\x01\x02\x05\x00\x03\x01\x03\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewMem()
		faults := newResumeFaults()
		opts := smallOptions()
		opts.FS, opts.Logger = errorfs.Wrap(fsys, faults.injector()), quietLogger
		opts.MemstoreSize = MinMemstoreSize
		// Inputs of odd length run in reverse key order (Options.Comparator).
		order := []*sstables.Comparator{sstables.Bytewise, reverseOrder}[len(data)%2]
		// Those whose length is 2 or 3 modulo 4 with a cache of 256 MiB,
		// whose blocks keep their hints and whose tables their block slots.
		if len(data)%4 >= 2 {
			opts.MemoryBudget = 256 << 20
		}
		opts.Comparator = order
		opts.MaxOpenFiles = MinMaxOpenFiles
		opts.Merger = AppendMerger
		db, err := Open("/db", opts)
		if err != nil {
			t.Fatal(err)
		}
		setTableCacheCapacity(db, 2) // reads reopen tables, and pin more than the bound
		defer func() { db.Close() }()
		m := model{}
		var snap *Snapshot
		var snapState model
		var follower *DB // lives across the writer's sessions
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		key := func() []byte { return []byte{'k', '0' + next()%16} }
		value := func() []byte { return bytes.Repeat([]byte{next()}, int(next())%200) }
		// writeOptions returns a write's options, and whether they are
		// valid: DefaultSync, Sync or NoSync, or now and then not.
		writeOptions := func() (WriteOptions, bool) {
			switch b := next(); b % 8 {
			case 6:
				return Sync | NoSync, false
			case 7:
				return WriteOptions(1 << (2 + b/8%6)), false
			default:
				return WriteOptions(b % 8 % 3), true
			}
		}
		// prefix returns a prefix of the keys: none, "k", a whole key, or
		// one that no key has.
		prefix := func() []byte {
			switch next() % 4 {
			case 0:
				return nil
			case 1:
				return []byte("k")
			case 2:
				return key()
			}
			return append(key(), 0xff)
		}
		// iterBound returns an iterator's bound: a key, or now and then nil
		// (open) or empty (a bound before every key, bytewise).
		iterBound := func() []byte {
			switch next() % 8 {
			case 0, 1:
				return nil
			case 2:
				return []byte{}
			}
			return key()
		}
		// walk checks a random walk over bounds drawn from the input, its
		// moves drawn from a generator seeded by it.
		walk := func(newIter func(lo, hi []byte) (*Iterator, error), m model, seed byte, msg string) {
			lo, hi := iterBound(), iterBound()
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(next())))
			h := newHeld(t, order.Compare, newIter, m, lo, hi)
			defer h.it.Close()
			h.walk(t, rng, 20, func() []byte { return []byte{'k', '0' + byte(rng.IntN(17))} }, msg+" (walk)")
		}
		// bound returns a range deletion's bound: a key, or now and then
		// nil, unbounded, or empty, a bound before every key.
		bound := func() []byte {
			switch next() % 16 {
			case 0, 1:
				return nil
			case 2:
				return []byte{}
			}
			return key()
		}
		for step := 0; len(data) > 0 && step < 300; step++ {
			msg := fmt.Sprintf("step %d", step)
			switch op := next(); op % 11 {
			case 0:
				k, v := key(), value()
				wo, ok := writeOptions()
				if err := db.Put(k, v, wo); !ok {
					if !errors.Is(err, ErrInvalidOption) {
						t.Fatalf("a Put with WriteOptions %#x: %v", uint8(wo), err)
					}
					break
				} else if err != nil {
					t.Fatal(err)
				}
				m[string(k)] = string(v)
			case 1:
				k := key()
				wo, ok := writeOptions()
				if err := db.Delete(k, wo); !ok {
					if !errors.Is(err, ErrInvalidOption) {
						t.Fatalf("a Delete with WriteOptions %#x: %v", uint8(wo), err)
					}
					break
				} else if err != nil {
					t.Fatal(err)
				}
				delete(m, string(k))
				if op%3 == 0 {
					// And a merge, appending.
					o := []byte{'+', op}
					if err := db.Merge(k, o, DefaultSync); err != nil {
						t.Fatal(err)
					}
					m.merge(k, o)
				}
			case 2:
				// A batch, an indexed one read after its writes, or a
				// transaction read the same way.
				var w modelWriter
				var read modelReader
				var commit func() error
				switch kind := next() % 3; kind {
				case 0, 1:
					b := db.NewBatch()
					if kind == 1 {
						b = db.NewIndexedBatch()
						read = b
					}
					w, commit = b, func() error { return db.Write(b, DefaultSync) }
				default:
					tx, err := db.NewTxn(true)
					if err != nil {
						t.Fatal(err)
					}
					w, read, commit = tx, tx, func() error { return tx.Commit(DefaultSync) }
				}
				staged := maps.Clone(m)
				for range next() % 5 {
					k := key()
					if c := next(); c%3 == 0 {
						w.Delete(k)
						delete(staged, string(k))
					} else if c%7 == 1 && order == sstables.Bytewise {
						lo := bound()
						w.DeleteRange(lo, k)
						staged.deleteRange(lo, k)
					} else if c%5 == 2 {
						o := []byte{'+', c}
						w.Merge(k, o)
						staged.merge(k, o)
					} else {
						v := value()
						w.Put(k, v)
						staged[string(k)] = string(v)
					}
				}
				if read != nil {
					checkGet(t, read, staged, key(), msg+" (batch or transaction)")
					walk(read.NewIterator, staged, next(), msg+" (batch or transaction)")
				}
				if err := commit(); err != nil {
					t.Fatal(err)
				}
				m = staged
			case 3, 4:
				checkGet(t, db, m, key(), msg)
			case 5:
				// A scan both ways, a walk that switches direction, or a
				// prefix scan, or a follower's scan after a catch-up.
				switch b := next(); {
				case b%4 == 0:
					checkScan(t, order.Compare, db.NewIterator, m, nil, nil, msg)
				case b%4 == 1:
					walk(db.NewIterator, m, b, msg)
				case b%4 == 2:
					checkPrefixScan(t, modelOrder{c: order}, db.NewPrefixIterator, m, prefix(), msg)
				case follower == nil:
					fo := *opts
					fo.FS, fo.Follow = fsys, true
					if follower, err = Open("/db", &fo); err != nil {
						t.Fatal(err)
					}
					defer follower.Close()
					fallthrough
				default:
					if err := follower.CatchUp(); err != nil {
						t.Fatal(err)
					}
					checkScan(t, order.Compare, follower.NewIterator, m, nil, nil, msg+" (follower)")
				}
			case 6:
				if snap != nil {
					snap.Release()
				}
				snap, snapState = db.NewSnapshot(), maps.Clone(m)
			case 7:
				if snap != nil {
					checkGet(t, snap, snapState, key(), msg+" (snapshot)")
					walk(snap.NewIterator, snapState, next(), msg+" (snapshot)")
					checkPrefixScan(t, modelOrder{c: order}, snap.NewPrefixIterator, snapState, prefix(), msg+" (snapshot)")
				}
			case 8:
				switch b := next(); b % 4 {
				case 0:
					err = db.Flush()
				case 1:
					err = db.Compact()
				case 2:
					err = checkCheckpoint(t, db, fsys, m, step, msg)
				default:
					err = faults.inject(db, b/4) // a fault, and Resume
				}
				if err != nil {
					t.Fatal(err)
				}
			case 10:
				lo, hi := bound(), bound()
				if err := db.DeleteRange(lo, hi, DefaultSync); order != sstables.Bytewise {
					if !errors.Is(err, ErrRangeDelOrder) {
						t.Fatalf("a range deletion in %s order: %v", order.Name, err)
					}
					break
				} else if err != nil {
					t.Fatal(err)
				}
				m.deleteRange(lo, hi) // nothing, if the range is empty
			case 9:
				if snap != nil {
					snap.Release()
					snap = nil
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				if next()%2 == 1 {
					ro := *opts
					ro.ReadOnly = true
					if db, err = Open("/db", &ro); err != nil {
						t.Fatal(err)
					}
					checkScan(t, order.Compare, db.NewIterator, m, nil, nil, msg+" (read-only)")
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					if report, err := Verify("/db", opts, nil); err != nil || len(report.Damage) > 0 {
						t.Fatalf("%s: verify: %v %v", msg, err, report)
					}
				}
				if db, err = Open("/db", opts); err != nil {
					t.Fatal(err)
				}
				setTableCacheCapacity(db, 2)
			}
		}
	})
}

// checkCheckpoint takes a checkpoint of db into a directory of its own on
// fsys, and checks that it opens to m.
func checkCheckpoint(t *testing.T, db *DB, fsys vfs.FS, m model, step int, msg string) error {
	dir := fmt.Sprintf("/ckpt-%d", step)
	if err := db.Checkpoint(dir); err != nil {
		return err
	}
	opts := testOptions(fsys)
	opts.Comparator, opts.Merger = db.opts.Comparator, db.opts.Merger
	cdb, err := Open(dir, opts)
	if err != nil {
		return err
	}
	checkScan(t, db.opts.Comparator.Compare, cdb.NewIterator, m, nil, nil, msg+" (checkpoint)")
	return cdb.Close()
}
