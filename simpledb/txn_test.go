package simpledb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/testseed"
	"github.com/stratadb/strata/vfs"
	"github.com/stratadb/strata/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

func txnDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open("/db", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// Write skew: two transactions each read both of two keys and write a
// different one. Under snapshot isolation both commit, and the invariant
// they each checked (x + y >= 1 after taking one away) breaks; here the
// second aborts.
func TestTxnWriteSkew(t *testing.T) {
	db := txnDB(t)
	require.NoError(t, db.Put([]byte("x"), []byte("1"), DefaultSync))
	require.NoError(t, db.Put([]byte("y"), []byte("1"), DefaultSync))
	t1, err := db.NewTxn(true)
	require.NoError(t, err)
	t2, err := db.NewTxn(true)
	require.NoError(t, err)
	for _, tx := range []*Txn{t1, t2} {
		for _, k := range []string{"x", "y"} {
			v, err := tx.Get([]byte(k))
			require.NoError(t, err)
			require.Equal(t, "1", string(v))
		}
	}
	require.NoError(t, t1.Put([]byte("x"), []byte("0")))
	require.NoError(t, t2.Put([]byte("y"), []byte("0")))
	require.NoError(t, t1.Commit(DefaultSync))
	require.ErrorIs(t, t2.Commit(DefaultSync), ErrConflict)
	v, err := db.Get([]byte("y"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v), "the refused transaction wrote nothing")
}

// A phantom: a transaction scans a range and finds nothing; another
// inserts into it and commits; the first, writing on what it saw, aborts.
// A scan of a range the insert missed commits.
func TestTxnPhantom(t *testing.T) {
	for _, tc := range []struct {
		name         string
		lower, upper string
		insert       string
		plainInsert  bool
		err          error
	}{
		{"insert in the scanned range", "a", "c", "b", false, ErrConflict},
		{"insert outside it", "a", "c", "d", false, nil},
		{"a plain Put in the range", "a", "c", "b", true, ErrConflict},
		{"insert at the upper bound", "a", "c", "c", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := txnDB(t)
			t1, err := db.NewTxn(true)
			require.NoError(t, err)
			it, err := t1.NewIterator([]byte(tc.lower), []byte(tc.upper))
			require.NoError(t, err)
			require.False(t, it.First())
			require.NoError(t, it.Close())
			if tc.plainInsert {
				require.NoError(t, db.Put([]byte(tc.insert), []byte("v"), DefaultSync))
			} else {
				require.NoError(t, db.Update(0, func(t2 *Txn) error { return t2.Put([]byte(tc.insert), []byte("v")) }))
			}
			require.NoError(t, t1.Put([]byte("summary"), []byte("empty")))
			err = t1.Commit(DefaultSync)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// A range deletion committed meanwhile conflicts with a key read inside
// it; a transaction reads its own writes over its snapshot.
func TestTxnReadsAndRangeDeletion(t *testing.T) {
	db := txnDB(t)
	require.NoError(t, db.Put([]byte("k1"), []byte("old"), DefaultSync))
	tx, err := db.NewTxn(true)
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("k2"), []byte("later"), DefaultSync))
	_, err = tx.Get([]byte("k2"))
	require.ErrorIs(t, err, ErrNotFound, "the snapshot predates k2")
	require.NoError(t, tx.Put([]byte("k3"), []byte("mine")))
	v, err := tx.Get([]byte("k3"))
	require.NoError(t, err)
	require.Equal(t, "mine", string(v))
	it, err := tx.NewIterator(nil, nil)
	require.NoError(t, err)
	var keys []string
	for k := range it.All() {
		keys = append(keys, string(k))
	}
	require.NoError(t, it.Close())
	require.Equal(t, []string{"k1", "k3"}, keys)
	tx.Discard()

	tx, err = db.NewTxn(true)
	require.NoError(t, err)
	_, err = tx.Get([]byte("k1"))
	require.NoError(t, err)
	require.NoError(t, db.DeleteRange([]byte("k0"), []byte("k2"), DefaultSync))
	require.NoError(t, tx.Put([]byte("k9"), []byte("v")))
	require.ErrorIs(t, tx.Commit(DefaultSync), ErrConflict)
}

func TestTxnMisuse(t *testing.T) {
	db := txnDB(t)
	tx, err := db.NewTxn(true)
	require.NoError(t, err)
	require.NoError(t, tx.Put([]byte("k"), []byte("v")))
	require.NoError(t, tx.Commit(DefaultSync))
	_, err = tx.Get([]byte("k"))
	require.ErrorIs(t, err, ErrTxnDone)
	require.ErrorIs(t, tx.Put([]byte("k"), []byte("v")), ErrTxnDone)
	require.ErrorIs(t, tx.Commit(DefaultSync), ErrTxnDone)
	tx.Discard() // after Commit: nothing

	require.ErrorIs(t, db.View(func(tx *Txn) error { return tx.Put([]byte("k"), []byte("v")) }), ErrTxnReadOnly)

	// A closure that fails or panics discards: nothing is written, and
	// the oracle forgets the transaction.
	boom := errors.New("boom")
	require.ErrorIs(t, db.Update(3, func(tx *Txn) error {
		tx.Put([]byte("never"), []byte("v"))
		return boom
	}), boom)
	require.PanicsWithValue(t, "bang", func() {
		db.Update(0, func(tx *Txn) error {
			tx.Put([]byte("never"), []byte("v"))
			panic("bang")
		})
	})
	_, err = db.Get([]byte("never"))
	require.ErrorIs(t, err, ErrNotFound)
	require.Zero(t, db.oracle.open.Load())
	require.Empty(t, db.oracle.writes, "no write is kept once no transaction is open")

	require.NoError(t, db.Close())
	_, err = db.NewTxn(true)
	require.ErrorIs(t, err, ErrClosed)
}

// A transaction whose snapshot predates what the oracle keeps fails with
// ErrTxnTooOld rather than commit unchecked.
func TestTxnTooOld(t *testing.T) {
	saved := maxOracleBytes
	maxOracleBytes = 100
	t.Cleanup(func() { maxOracleBytes = saved })
	db := txnDB(t)
	old, err := db.NewTxn(true)
	require.NoError(t, err)
	_, err = old.Get([]byte("a"))
	require.ErrorIs(t, err, ErrNotFound)
	for i := range 50 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "key-%03d", i), []byte("v"), DefaultSync))
	}
	require.NoError(t, old.Put([]byte("b"), []byte("v")))
	require.ErrorIs(t, old.Commit(DefaultSync), ErrTxnTooOld)
}

// The bank: accounts, transfers between them in concurrent transactions
// with retries, and readers that check the total all the while.
func TestTxnBank(t *testing.T) {
	const accounts, initial, workers, transfers = 8, 100, 4, 150
	db := txnDB(t)
	account := func(i int) []byte { return fmt.Appendf(nil, "account-%02d", i) }
	balance := func(v []byte) int64 { return int64(binary.BigEndian.Uint64(v)) }
	amount := func(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
	for i := range accounts {
		require.NoError(t, db.Put(account(i), amount(initial), DefaultSync))
	}
	total := func(tx *Txn) (int64, error) {
		it, err := tx.NewPrefixIterator([]byte("account-"))
		if err != nil {
			return 0, err
		}
		defer it.Close()
		var sum int64
		for _, v := range it.All() {
			sum += balance(v)
		}
		return sum, it.Err()
	}
	var runs, violations atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range transfers {
				from, to := rng.IntN(accounts), rng.IntN(accounts)
				err := db.Update(100, func(tx *Txn) error {
					runs.Add(1)
					a, err := tx.Get(account(from))
					if err != nil {
						return err
					}
					b, err := tx.Get(account(to))
					if err != nil {
						return err
					}
					n := int64(rng.IntN(10))
					if from == to || balance(a) < n {
						return nil
					}
					if err := tx.Put(account(from), amount(balance(a)-n)); err != nil {
						return err
					}
					return tx.Put(account(to), amount(balance(b)+n))
				})
				if err != nil {
					t.Errorf("transfer: %v", err)
					return
				}
			}
		})
	}
	var checker sync.WaitGroup
	checker.Go(func() {
		for !stop.Load() {
			err := db.View(func(tx *Txn) error {
				sum, err := total(tx)
				if err == nil && sum != accounts*initial {
					violations.Add(1)
				}
				return err
			})
			if err != nil {
				t.Errorf("view: %v", err)
				return
			}
		}
	})
	wg.Wait()
	stop.Store(true)
	checker.Wait()
	require.NoError(t, db.View(func(tx *Txn) error {
		sum, err := total(tx)
		require.Equal(t, int64(accounts*initial), sum)
		return err
	}))
	require.Zero(t, violations.Load())
	require.Zero(t, db.oracle.open.Load())
	t.Logf("%d transfers by %d workers, %d conflicts retried", workers*transfers, workers, runs.Load()-workers*transfers)
}

// A write whose log failed has a sequence number that is never published:
// a transaction begun after it, and after Resume, must not wait for it.
func TestTxnAfterFailedWrite(t *testing.T) {
	faults := newResumeFaults()
	o := testOptions(vfs.NewMem())
	o.FS = errorfs.Wrap(o.FS, faults.injector())
	db, err := Open("/db", o)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Put([]byte("k"), []byte("v"), DefaultSync))
	require.NoError(t, faults.inject(db, 0)) // a failed log fsync, then Resume
	done := make(chan error, 1)
	go func() {
		done <- db.Update(0, func(tx *Txn) error {
			v, err := tx.Get([]byte("k"))
			if err != nil {
				return err
			}
			return tx.Put([]byte("k"), append(v, '2'))
		})
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a transaction waited for a write that failed")
	}
	v, err := db.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v2", string(v))
}

// The retry loop every Badger user writes, by hand, with synced commits:
// begin, read a counter, write it back plus one, commit, and on
// ErrConflict begin again at once. A transaction begins on a snapshot
// that holds every write appended before it, so it cannot conflict with
// one of those: the loop converges, with few conflicts, as Update's does.
// The conflicts are counted, not timed. On a real disk, whose fsyncs
// leave appended writes unpublished for a while.
func TestTxnRetryLoopConverges(t *testing.T) {
	const workers, keys, increments = 4, 160, 60
	opts := testOptions(vfs.Default)
	db, err := Open(t.TempDir(), opts)
	require.NoError(t, err)
	defer db.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "counter-%03d", i) }
	increment := func(k []byte) (attempts int, err error) {
		for {
			attempts++
			tx, err := db.NewTxn(true)
			if err != nil {
				return attempts, err
			}
			var n uint64
			switch v, err := tx.Get(k); {
			case err == nil:
				n = binary.BigEndian.Uint64(v)
			case !errors.Is(err, ErrNotFound):
				tx.Discard()
				return attempts, err
			}
			if err := tx.Put(k, binary.BigEndian.AppendUint64(nil, n+1)); err != nil {
				tx.Discard()
				return attempts, err
			}
			switch err := tx.Commit(Sync); {
			case errors.Is(err, ErrConflict):
				continue
			case err != nil:
				return attempts, err
			}
			return attempts, nil
		}
	}
	var conflicts, most atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 37))
			for range increments {
				attempts, err := increment(key(rng.IntN(keys)))
				if err != nil {
					errs <- err
					return
				}
				conflicts.Add(int64(attempts - 1))
				for m := most.Load(); int64(attempts) > m && !most.CompareAndSwap(m, int64(attempts)); m = most.Load() {
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	commits := int64(workers * increments)
	t.Logf("%d commits, %d conflicts, at most %d attempts", commits, conflicts.Load(), most.Load())
	require.LessOrEqual(t, conflicts.Load(), commits, "at most one conflict a commit")
	require.LessOrEqual(t, most.Load(), int64(100), "no transaction needs more than 100 attempts")
	var total uint64
	for i := range keys {
		if v, err := db.Get(key(i)); err == nil {
			total += binary.BigEndian.Uint64(v)
		} else {
			require.ErrorIs(t, err, ErrNotFound)
		}
	}
	require.EqualValues(t, commits, total, "every increment counted once")
}

// A transaction that read much, committed after many writes: 5,000 prefix
// iterators against 100,000 Puts, and 20,000 point reads against 5,000
// range deletions beside them (a tenth of the writes without -long). It
// commits, or conflicts with the one write that meets what it read,
// wherever that write falls among the others, while another goroutine
// writes beside the commit; what it costs is
// BenchmarkSimpleDBTxnWideReadSet's.
func TestTxnWideReadSet(t *testing.T) {
	const prefixes, reads = 5000, 20_000
	puts, rangeDels := 10_000, 500
	if testseed.Long() {
		puts, rangeDels = 100_000, 5000
	}
	prefix := func(i int) []byte { return fmt.Appendf(nil, "p%05d/", i) }
	readKey := func(i int) []byte { return fmt.Appendf(nil, "r%07d", 2*i) }
	iterate := func(tx *Txn) error {
		for i := range prefixes {
			it, err := tx.NewPrefixIterator(prefix(i))
			if err != nil {
				return err
			}
			if it.First() {
				return fmt.Errorf("prefix %d holds %q", i, it.Key())
			}
			if err := it.Close(); err != nil {
				return err
			}
		}
		return nil
	}
	get := func(tx *Txn) error {
		for i := range reads {
			if _, err := tx.Get(readKey(i)); !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("read %d: %v", i, err)
			}
		}
		return nil
	}
	put := func(meet int) func(db *DB, i int) error {
		return func(db *DB, i int) error {
			k := fmt.Appendf(nil, "w%07d", i)
			if i == meet {
				k = append(prefix(prefixes/3), 'x')
			}
			return db.Put(k, []byte("v"), NoSync)
		}
	}
	deleteRange := func(meet int) func(db *DB, i int) error {
		return func(db *DB, i int) error {
			k := readKey(reads + i) // beside the reads
			if i == meet {
				k = readKey(reads / 2)
			}
			return db.DeleteRange(k, append(k, 0), NoSync)
		}
	}
	for _, tc := range []struct {
		name   string
		read   func(*Txn) error
		writes int
		write  func(db *DB, i int) error
		err    error
	}{
		{"iterators, no write in them", iterate, puts, put(-1), nil},
		{"iterators, the first write in one", iterate, puts, put(0), ErrConflict},
		{"iterators, a middle write in one", iterate, puts, put(puts / 2), ErrConflict},
		{"iterators, the last write in one", iterate, puts, put(puts - 1), ErrConflict},
		{"reads, no range deletion over them", get, rangeDels, deleteRange(-1), nil},
		{"reads, a middle range deletion over one", get, rangeDels, deleteRange(rangeDels / 2), ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := txnDB(t)
			tx, err := db.NewTxn(true)
			require.NoError(t, err)
			require.NoError(t, tc.read(tx))
			require.NoError(t, tx.Put([]byte("txn"), []byte("v")))
			for i := range tc.writes {
				require.NoError(t, tc.write(db, i))
			}
			// Another goroutine writes, outside what the transaction
			// read, while its commit checks a chunk at a time: the
			// appends record under the lock the check lets go of.
			stop := make(chan struct{})
			var other sync.WaitGroup
			other.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if err := db.Put(fmt.Appendf(nil, "o%07d", i), []byte("v"), NoSync); err != nil {
						t.Error(err)
						return
					}
				}
			})
			err = tx.Commit(NoSync)
			close(stop)
			other.Wait()
			_, getErr := db.Get([]byte("txn"))
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				require.ErrorIs(t, getErr, ErrNotFound, "the refused transaction wrote nothing")
				return
			}
			require.NoError(t, err)
			require.NoError(t, getErr)
		})
	}
}

// UpdateWith commits as its options say, refuses what it cannot take
// before running fn, and keeps the transaction its own: a Commit inside fn
// is refused, a Discard there ends the run with ErrTxnDone.
func TestTxnUpdateWith(t *testing.T) {
	put := func(tx *Txn) error { return tx.Put([]byte("k"), []byte("v")) }
	for _, tc := range []struct {
		name    string
		opts    WriteOptions
		retries int
		fn      func(tx *Txn) error
		err     error
		runs    int  // how many times fn ran
		written bool // whether k holds v after
	}{
		{"commits", NoSync, 0, put, nil, 1, true},
		{"negative retries", NoSync, -1, put, ErrInvalidOption, 0, false},
		{"write options it does not take", Sync | NoSync, 0, put, ErrInvalidOption, 0, false},
		{"a Commit inside fn, returned", DefaultSync, 0, func(tx *Txn) error {
			if err := put(tx); err != nil {
				return err
			}
			return tx.Commit(Sync)
		}, ErrTxnManaged, 1, false},
		{"a Commit inside fn, ignored", DefaultSync, 0, func(tx *Txn) error {
			if err := put(tx); err != nil {
				return err
			}
			_ = tx.Commit(Sync) // refused: the transaction goes on
			return put(tx)
		}, nil, 1, true},
		{"a Discard inside fn", DefaultSync, 0, func(tx *Txn) error {
			if err := put(tx); err != nil {
				return err
			}
			tx.Discard()
			return nil
		}, ErrTxnDone, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := txnDB(t)
			runs := 0
			err := db.UpdateWith(tc.opts, tc.retries, func(tx *Txn) error {
				runs++
				return tc.fn(tx)
			})
			if tc.err == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.err)
			}
			require.Equal(t, tc.runs, runs)
			_, err = db.Get([]byte("k"))
			if tc.written {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrNotFound)
			}
			require.Zero(t, db.oracle.open.Load(), "the transaction ended")
		})
	}

	t.Run("View refuses a Commit", func(t *testing.T) {
		db := txnDB(t)
		require.ErrorIs(t, db.View(func(tx *Txn) error { return tx.Commit(DefaultSync) }), ErrTxnManaged)
	})

	// Durability as asked: in a synced database, an UpdateWith(NoSync)
	// commit survives a crash of the process but not a power loss; Sync's
	// and DefaultSync's survive both.
	t.Run("durability", func(t *testing.T) {
		for _, tc := range []struct {
			opts      WriteOptions
			powerLoss bool // survives it
		}{{NoSync, false}, {Sync, true}, {DefaultSync, true}} {
			mem := vfs.NewMem()
			opts := testOptions(mem)
			opts.NoSync = false
			db, err := Open("/db", opts)
			require.NoError(t, err)
			require.NoError(t, db.UpdateWith(tc.opts, 0, put))
			lost := mem.CrashClone(vfs.CrashOptions{})
			require.NoError(t, db.Close())
			opts.FS = lost
			db, err = Open("/db", opts)
			require.NoError(t, err)
			_, err = db.Get([]byte("k"))
			if tc.powerLoss {
				require.NoError(t, err, "WriteOptions %d", tc.opts)
			} else {
				require.ErrorIs(t, err, ErrNotFound, "WriteOptions %d", tc.opts)
			}
			require.NoError(t, db.Close())
		}
	})

	// Retries count the runs after the first: a transaction that always
	// conflicts runs retries+1 times, then returns ErrConflict.
	t.Run("retries", func(t *testing.T) {
		db := txnDB(t)
		for _, retries := range []int{0, 1, 3} {
			runs := 0
			err := db.UpdateWith(NoSync, retries, func(tx *Txn) error {
				runs++
				if _, err := tx.Get([]byte("hot")); err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				if err := db.Put([]byte("hot"), []byte{byte(runs)}, NoSync); err != nil { // meets the read
					return err
				}
				return tx.Put([]byte("k"), []byte("v"))
			})
			require.ErrorIs(t, err, ErrConflict)
			require.Equal(t, retries+1, runs)
		}
	})
}
