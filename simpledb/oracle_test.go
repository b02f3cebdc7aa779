package simpledb

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// These tests drive the oracle directly, as the commit pipeline and Txn do,
// with transactions and batches built by hand: txn_test.go covers the same
// rules end to end through a database, these pin the edges (a write at the
// snapshot, a range's bounds, the group's writes ahead, what end forgets).

func newTestOracle() *oracle { return &oracle{cmp: bytes.Compare} }

// noneAhead is a group with nothing ahead of the transaction.
func noneAhead(func(*Batch) bool) {}

// readTxn is a transaction of snapshot snap that read keys and iterated
// ranges, as Txn.read and Txn.NewIterator leave it, sealed as Txn.Commit
// seals it.
func readTxn(snap uint64, keys []string, ranges ...keyRange) *readSet {
	t := &readSet{snapSeq: snap, certified: snap}
	for _, k := range keys {
		t.addKey([]byte(k))
	}
	for _, r := range ranges {
		t.addRange(r.lo, r.hi)
	}
	t.seal(bytes.Compare)
	return t
}

// rng is the keyRange [lo, hi); "" stands for an open bound.
func rng(lo, hi string) keyRange {
	var r keyRange
	if lo != "" {
		r.lo = []byte(lo)
	}
	if hi != "" {
		r.hi = []byte(hi)
	}
	return r
}

func writeBatch(t *testing.T, keys ...string) *Batch {
	t.Helper()
	b := new(Batch)
	for _, k := range keys {
		require.NoError(t, b.Put([]byte(k), []byte("v")))
	}
	return b
}

func oneOp(t *testing.T, op func(*Batch) error) *Batch {
	t.Helper()
	b := new(Batch)
	require.NoError(t, op(b))
	return b
}

// delRangeBatch deletes [lo, hi); "" stands for an open bound.
func delRangeBatch(t *testing.T, lo, hi string) *Batch {
	t.Helper()
	r := rng(lo, hi)
	b := new(Batch)
	require.NoError(t, b.DeleteRange(r.lo, r.hi))
	require.Equal(t, 1, b.Len(), "an empty range adds nothing, and could not conflict")
	return b
}

// requireKeyBytes checks the oracle's count of the key bytes it keeps,
// which maxOracleBytes bounds, against the writes it keeps.
func requireKeyBytes(t *testing.T, o *oracle) {
	t.Helper()
	n := 0
	for _, w := range o.writes {
		for _, k := range w.keys {
			n += len(k)
		}
		for _, r := range w.ranges {
			n += len(r.lo) + len(r.hi)
		}
	}
	require.Equal(t, n, o.keyBytes)
}

func recordedSeqs(o *oracle) []uint64 {
	var seqs []uint64
	for _, w := range o.writes {
		seqs = append(seqs, w.seq)
	}
	return seqs
}

type seqBatch struct {
	seq uint64
	b   *Batch
}

func TestOracleCertify(t *testing.T) {
	const snap = 10
	for _, tc := range []struct {
		name    string
		txn     *readSet
		writes  []seqBatch // recorded, ascending
		pending []*Batch   // ahead in the group; nil: a flush request
		err     error
	}{
		{"a write above the snapshot to a key read", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, writeBatch(t, "k")}}, nil, ErrConflict},
		{"a write at the snapshot", readTxn(snap, []string{"k"}),
			[]seqBatch{{10, writeBatch(t, "k")}}, nil, nil},
		{"a write below the snapshot, then another key above", readTxn(snap, []string{"k"}),
			[]seqBatch{{9, writeBatch(t, "k")}, {11, writeBatch(t, "j")}}, nil, nil},
		{"a write above to another key", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, writeBatch(t, "j", "l")}}, nil, nil},
		{"the key read among a batch's", readTxn(snap, []string{"k"}),
			[]seqBatch{{13, writeBatch(t, "a", "k", "z")}}, nil, ErrConflict},
		{"the newest write is clear, an older one above the snapshot is not", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, writeBatch(t, "k")}, {12, writeBatch(t, "j")}}, nil, ErrConflict},
		{"a deletion of a key read", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, oneOp(t, func(b *Batch) error { return b.Delete([]byte("k")) })}}, nil, ErrConflict},
		{"a merge into a key read", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, oneOp(t, func(b *Batch) error { return b.Merge([]byte("k"), []byte("+1")) })}}, nil, ErrConflict},
		{"a write into an iterated range", readTxn(snap, nil, rng("b", "d")),
			[]seqBatch{{11, writeBatch(t, "c")}}, nil, ErrConflict},
		{"a write at an iterated range's lower bound", readTxn(snap, nil, rng("b", "d")),
			[]seqBatch{{11, writeBatch(t, "b")}}, nil, ErrConflict},
		{"a write at an iterated range's upper bound", readTxn(snap, nil, rng("b", "d")),
			[]seqBatch{{11, writeBatch(t, "d", "a")}}, nil, nil},
		{"a write into an iteration open above", readTxn(snap, nil, rng("b", "")),
			[]seqBatch{{11, writeBatch(t, "zzz")}}, nil, ErrConflict},
		{"a write into an iteration of everything", readTxn(snap, nil, rng("", "")),
			[]seqBatch{{11, writeBatch(t, "a")}}, nil, ErrConflict},
		{"a write into an iterated range below the snapshot", readTxn(snap, nil, rng("b", "d")),
			[]seqBatch{{10, writeBatch(t, "c")}}, nil, nil},
		{"a range deletion covering a key read", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, delRangeBatch(t, "a", "z")}}, nil, ErrConflict},
		{"a range deletion starting at a key read", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, delRangeBatch(t, "k", "l")}}, nil, ErrConflict},
		{"a range deletion ending at a key read", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, delRangeBatch(t, "a", "k")}}, nil, nil},
		{"a range deletion of everything", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, delRangeBatch(t, "", "")}}, nil, ErrConflict},
		{"a range deletion open below, over a key read", readTxn(snap, []string{"k"}),
			[]seqBatch{{11, delRangeBatch(t, "", "m")}}, nil, ErrConflict},
		{"a range deletion overlapping an iterated range", readTxn(snap, nil, rng("b", "d")),
			[]seqBatch{{11, delRangeBatch(t, "c", "e")}}, nil, ErrConflict},
		{"a range deletion inside an iterated range", readTxn(snap, nil, rng("b", "z")),
			[]seqBatch{{11, delRangeBatch(t, "c", "d")}}, nil, ErrConflict},
		{"a range deletion holding an iterated range", readTxn(snap, nil, rng("c", "d")),
			[]seqBatch{{11, delRangeBatch(t, "a", "z")}}, nil, ErrConflict},
		{"a range deletion open above, over an iteration open above", readTxn(snap, nil, rng("m", "")),
			[]seqBatch{{11, delRangeBatch(t, "x", "")}}, nil, ErrConflict},
		{"a range deletion ending where an iterated range starts", readTxn(snap, nil, rng("d", "f")),
			[]seqBatch{{11, delRangeBatch(t, "a", "d")}}, nil, nil},
		{"a range deletion starting where an iterated range ends", readTxn(snap, nil, rng("b", "d")),
			[]seqBatch{{11, delRangeBatch(t, "d", "f")}}, nil, nil},
		{"a range deletion at the snapshot", readTxn(snap, []string{"k"}),
			[]seqBatch{{10, delRangeBatch(t, "a", "z")}}, nil, nil},
		{"a write ahead in the group to a key read", readTxn(snap, []string{"k"}),
			nil, []*Batch{writeBatch(t, "j"), writeBatch(t, "k")}, ErrConflict},
		{"a range deletion ahead in the group over an iterated range", readTxn(snap, nil, rng("b", "d")),
			nil, []*Batch{delRangeBatch(t, "a", "c")}, ErrConflict},
		{"writes ahead in the group to other keys, and a flush request", readTxn(snap, []string{"k"}, rng("b", "d")),
			nil, []*Batch{writeBatch(t, "j"), nil, delRangeBatch(t, "d", "k")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newTestOracle()
			// An older transaction, open throughout, makes the oracle
			// record writes at or below tc.txn's snapshot as well.
			from, held := o.begin(0, 0)
			require.Zero(t, from)
			o.started(0, held)
			for _, w := range tc.writes {
				o.record(w.b, w.seq)
			}
			ahead := func(yield func(*Batch) bool) {
				for _, b := range tc.pending {
					if b != nil && !yield(b) { // nil: a flush request, which the pipeline skips
						return
					}
				}
			}
			err := o.certify(tc.txn, ahead)
			if tc.err == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.err)
			}
		})
	}
}

// With no transaction open a write is not recorded: the open count gates
// record, and begin of the first transaction starts recording afresh.
func TestOracleRecordsOnlyWhileOpen(t *testing.T) {
	o := newTestOracle()
	o.record(writeBatch(t, "k"), 5)
	require.Empty(t, o.writes, "no transaction is open")

	from, held := o.begin(5, 5)
	require.Equal(t, uint64(5), from)
	o.started(5, held)
	o.record(writeBatch(t, "k"), 6)
	require.Equal(t, []uint64{6}, recordedSeqs(o))
	require.ErrorIs(t, o.certify(readTxn(5, []string{"k"}), noneAhead), ErrConflict)

	// A second transaction begins while the first is open: recording
	// started earlier, at the first's from.
	from2, held2 := o.begin(6, 6)
	require.Equal(t, uint64(5), from2)
	o.started(6, held2)
	o.end(5)
	o.end(6)
	require.Zero(t, o.open.Load())
	require.Empty(t, o.writes, "the last transaction's end forgets everything")
	require.Zero(t, o.keyBytes)

	o.record(writeBatch(t, "k"), 7)
	require.Empty(t, o.writes, "no transaction is open")
}

// end forgets the writes that no open snapshot needs: those at or below the
// oldest one still held, begin's held snapshot included.
func TestOracleEndForgets(t *testing.T) {
	for _, tc := range []struct {
		name string
		// txns' snapshots, began in this order; ended those of ends, in
		// order.
		snaps []uint64
		ends  []int
		kept  []uint64
	}{
		{"the oldest ends", []uint64{10, 20}, []int{0}, []uint64{25, 30}},
		{"the newest ends", []uint64{10, 20}, []int{1}, []uint64{15, 25, 30}},
		{"the oldest of three ends, two share a snapshot", []uint64{10, 20, 20}, []int{0, 1}, []uint64{25, 30}},
		{"all end", []uint64{10, 20}, []int{1, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newTestOracle()
			for _, s := range tc.snaps {
				_, held := o.begin(s, s)
				o.started(s, held)
			}
			for _, seq := range []uint64{15, 25, 30} {
				o.record(writeBatch(t, "k"), seq)
			}
			for _, i := range tc.ends {
				o.end(tc.snaps[i])
			}
			require.Equal(t, tc.kept, recordedSeqs(o))
			requireKeyBytes(t, o)
			// What a transaction still open needs is still checked.
			for i, s := range tc.snaps {
				if !slices.Contains(tc.ends, i) {
					require.ErrorIs(t, o.certify(readTxn(s, []string{"k"}), noneAhead), ErrConflict)
				}
			}
		})
	}
}

// Between begin and started a transaction holds the visible sequence
// number: another transaction's end then keeps the writes above it.
func TestOracleEndKeepsWhatABeginHolds(t *testing.T) {
	o := newTestOracle()
	_, heldOld := o.begin(5, 5)
	o.started(5, heldOld)
	for _, seq := range []uint64{7, 9, 12} {
		o.record(writeBatch(t, "k"), seq)
	}
	from, held := o.begin(12, 8) // 9 to 12 are assigned, not yet visible
	require.Equal(t, uint64(5), from)
	require.Equal(t, uint64(8), held)
	o.end(5)
	require.Equal(t, []uint64{9, 12}, recordedSeqs(o))
	o.started(12, held)
	o.record(writeBatch(t, "j"), 13)
	o.end(12)
	require.Empty(t, o.writes)
}

// Beyond maxOracleBytes the oldest writes go, and a transaction whose
// snapshot is below the last write dropped can no longer be checked.
func TestOracleTooOld(t *testing.T) {
	saved := maxOracleBytes
	maxOracleBytes = 8 // two of the four-byte keys below
	t.Cleanup(func() { maxOracleBytes = saved })

	for _, tc := range []struct {
		name string
		txn  *readSet
		err  error
	}{
		{"a snapshot below the last write dropped", readTxn(10, []string{"else"}), ErrTxnTooOld},
		{"a snapshot at the last write dropped", readTxn(11, []string{"else"}), nil},
		{"a snapshot at it, reading a write kept", readTxn(11, []string{"k002"}), ErrConflict},
		{"a snapshot at it, reading the write dropped", readTxn(11, []string{"k001"}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newTestOracle()
			_, held := o.begin(10, 10)
			o.started(10, held)
			for i, k := range []string{"k001", "k002", "k003"} {
				o.record(writeBatch(t, k), uint64(11+i))
			}
			require.Equal(t, []uint64{12, 13}, recordedSeqs(o), "the oldest write is dropped")
			requireKeyBytes(t, o)
			err := o.certify(tc.txn, noneAhead)
			if tc.err == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.err)
			}
		})
	}

	// One write larger than the bound is kept: dropping it too would make
	// every open transaction too old for nothing.
	o := newTestOracle()
	_, held := o.begin(10, 10)
	o.started(10, held)
	o.record(delRangeBatch(t, "aaaaaa", "zzzzzz"), 11)
	require.Equal(t, []uint64{11}, recordedSeqs(o))
	require.ErrorIs(t, o.certify(readTxn(10, []string{"m"}), noneAhead), ErrConflict)

	// A write recorded later drops the range deletion in turn.
	o.record(writeBatch(t, "k001"), 12)
	o.record(writeBatch(t, "k002"), 13)
	require.Equal(t, []uint64{12, 13}, recordedSeqs(o))
	requireKeyBytes(t, o)
	require.ErrorIs(t, o.certify(readTxn(10, nil), noneAhead), ErrTxnTooOld)
}

// precertify checks the writes recorded so far a chunk at a time, and
// certify then checks only those recorded after: a conflict is found by
// whichever sees its write, and a write dropped once checked does not make
// the transaction too old.
func TestOraclePrecertify(t *testing.T) {
	const writes = 3*precertifyChunk + 10
	record := func(o *oracle, from uint64, n int, key func(i int) string) {
		for i := range n {
			o.record(writeBatch(t, key(i)), from+uint64(i))
		}
	}
	other := func(i int) string { return fmt.Sprintf("w%05d", i) }
	begin := func() *oracle {
		o := newTestOracle()
		_, held := o.begin(10, 10)
		o.started(10, held)
		return o
	}

	t.Run("a chunk per hold of the lock", func(t *testing.T) {
		o := begin()
		record(o, 11, writes, other)
		txn := readTxn(10, []string{"k"}, rng("a", "b"))
		for chunk := 1; chunk <= 3; chunk++ {
			done, err := o.check(txn, precertifyChunk)
			require.NoError(t, err)
			require.False(t, done)
			require.Equal(t, uint64(10+chunk*precertifyChunk), txn.certified, "chunk %d", chunk)
		}
		done, err := o.check(txn, precertifyChunk)
		require.NoError(t, err)
		require.True(t, done)
		require.Equal(t, uint64(10+writes), txn.certified)
	})

	t.Run("a conflict among the writes so far", func(t *testing.T) {
		o := begin()
		record(o, 11, writes, func(i int) string {
			if i == writes-1 {
				return "k"
			}
			return other(i)
		})
		require.ErrorIs(t, o.precertify(readTxn(10, []string{"k"})), ErrConflict)
	})

	t.Run("a conflict recorded after precertify", func(t *testing.T) {
		o := begin()
		record(o, 11, writes, other)
		txn := readTxn(10, []string{"k"})
		require.NoError(t, o.precertify(txn))
		require.Equal(t, uint64(10+writes), txn.certified)
		o.record(writeBatch(t, "k"), 11+writes)
		require.ErrorIs(t, o.certify(txn, noneAhead), ErrConflict)
	})

	t.Run("a few writes left to certify", func(t *testing.T) {
		o := begin()
		record(o, 11, precertifyChunk, func(i int) string {
			if i == 0 {
				return "k"
			}
			return other(i)
		})
		txn := readTxn(10, []string{"k"})
		require.NoError(t, o.precertify(txn), "a chunk or less is certify's")
		require.Equal(t, uint64(10), txn.certified)
		require.ErrorIs(t, o.certify(txn, noneAhead), ErrConflict)
	})

	t.Run("writes dropped once checked", func(t *testing.T) {
		const n = precertifyChunk + 2
		saved := maxOracleBytes
		maxOracleBytes = n * len(other(0))
		t.Cleanup(func() { maxOracleBytes = saved })
		o := begin()
		record(o, 11, n, other)
		txn := readTxn(10, []string{"k"})
		require.NoError(t, o.precertify(txn))
		record(o, 11+n, 2, other) // drops 11 and 12, which txn was checked against
		require.Equal(t, uint64(12), o.dropped)
		require.NoError(t, o.certify(txn, noneAhead))

		unchecked := readTxn(10, []string{"k"})
		require.ErrorIs(t, o.certify(unchecked, noneAhead), ErrTxnTooOld)
	})
}

// join registers a transaction beside open ones without the last sequence
// number: recording goes on from the first's from. With none open it
// registers nothing, and begin starts the recording.
func TestOracleJoin(t *testing.T) {
	o := newTestOracle()
	visible := func() uint64 { return 7 }
	_, _, ok := o.join(visible)
	require.False(t, ok, "no transaction is open")
	require.Zero(t, o.open.Load())

	from, held := o.begin(5, 5)
	o.started(5, held)
	o.record(writeBatch(t, "k"), 6)
	from2, held2, ok := o.join(visible)
	require.True(t, ok)
	require.Equal(t, from, from2, "recording goes on from the first's start")
	require.Equal(t, uint64(7), held2)
	require.Equal(t, int32(2), o.open.Load())
	o.end(5)
	require.Empty(t, o.writes, "the joined transaction's hold is above the write")
	o.record(writeBatch(t, "k"), 8)
	o.started(7, held2)
	require.ErrorIs(t, o.certify(readTxn(7, []string{"k"}), noneAhead), ErrConflict)
	o.end(7)
	require.Zero(t, o.open.Load())
}
