package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// The transaction workloads move amounts between accounts: each
// transaction reads txnKeys accounts, checks them, and writes each back
// with its balance changed, the changes summing to zero, and its count of
// writes one higher. An account is key k's fill value (appendValue(k,
// accountSize)) with two little-endian uint64 fields XORed into its bytes 8
// to 24, so that the fill's value is an account at zero:
//
//	bytes  0..8   8..16              16..24            24..100
//	       k      balance XOR fill   writes XOR fill   fill
//
// After the timed part, every account is read and checked again: the
// balances must sum to zero (no transaction applied in part, none lost
// another's update) and the writes to txnKeys × the commits (none lost,
// none applied twice).
//
// The counter workloads add 1 to counters, 8-byte little-endian uint64s,
// by Merge or by a read-modify-write in a transaction; afterwards each
// counter must hold the increments committed to it.
const (
	accountSize    = 100 // an account's length, -value-size's default whatever it says: the rows compare across runs
	txnKeys        = 4   // accounts a transaction reads and writes
	hotKeys        = 100 // the accounts of the contended workloads, and the counters
	counterWorkers = 8   // goroutines of the counter workloads
)

// account is what an account value holds besides its fill bytes.
type account struct {
	balance uint64 // wraps around: only the sum matters
	writes  uint64 // transactions that wrote the account
}

// appendAccount appends key k's account value holding a to dst.
func appendAccount(dst []byte, k uint64, a account) []byte {
	start := len(dst)
	dst = appendValue(dst, k, accountSize)
	v := dst[start:]
	binary.LittleEndian.PutUint64(v[8:], binary.LittleEndian.Uint64(v[8:])^a.balance)
	binary.LittleEndian.PutUint64(v[16:], binary.LittleEndian.Uint64(v[16:])^a.writes)
	return dst
}

// account returns what key k's account value v holds, or an error unless
// v is one: every byte outside the two fields must be the fill's.
func (c *checker) account(v []byte, k uint64) (account, error) {
	c.want = appendValue(c.want[:0], k, accountSize)
	w := c.want
	if len(v) != accountSize || !bytes.Equal(v[:8], w[:8]) || !bytes.Equal(v[24:], w[24:]) {
		return account{}, fmt.Errorf("key %d: not its account (%d bytes, want %d)", k, len(v), accountSize)
	}
	return account{
		balance: binary.LittleEndian.Uint64(v[8:]) ^ binary.LittleEndian.Uint64(w[8:]),
		writes:  binary.LittleEndian.Uint64(v[16:]) ^ binary.LittleEndian.Uint64(w[16:]),
	}, nil
}

// transferer is one goroutine of a transaction workload.
type transferer struct {
	rng    *rand.Rand
	c      checker
	ids    [txnKeys]uint64
	keys   [txnKeys][]byte // kept unchanged until the transaction ends
	values [txnKeys][]byte
	aborts int64
}

// transfer runs one transaction over txnKeys distinct accounts drawn
// uniformly from 0..accounts-1: it reads and checks each, adds a random
// amount to the first ones' balances and takes their sum from the last
// one's, counts a write in each, and writes them back.
func (w *transferer) transfer(e transactor, accounts int) error {
	for i := range w.ids {
		k := w.rng.Uint64N(uint64(accounts))
		for slices.Contains(w.ids[:i], k) {
			k = w.rng.Uint64N(uint64(accounts))
		}
		w.ids[i] = k
		w.keys[i] = appendKey(w.keys[i][:0], k)
	}
	var amounts [txnKeys]uint64
	var sum uint64
	for i := range txnKeys - 1 {
		amounts[i] = 1 + w.rng.Uint64N(1000)
		sum += amounts[i]
	}
	amounts[txnKeys-1] = -sum
	aborts, err := e.Update(func(tx txn) error {
		for i, k := range w.ids {
			var a account
			err := tx.Get(w.keys[i], func(v []byte) error {
				var err error
				a, err = w.c.account(v, k)
				return err
			})
			if err != nil {
				return fmt.Errorf("get key %d: %w", k, err)
			}
			a.balance += amounts[i]
			a.writes++
			w.values[i] = appendAccount(w.values[i][:0], k, a)
			if err := tx.Put(w.keys[i], w.values[i]); err != nil {
				return fmt.Errorf("put key %d: %w", k, err)
			}
		}
		return nil
	})
	w.aborts += int64(aborts)
	return err
}

// transactions returns a transaction workload: workers goroutines running
// transfers for the workload's duration, over the filled database's
// p.keys accounts or, if hot, over accounts 0..hotKeys-1 only, which it
// first writes, untimed, at zero. One op is one commit. e is a transactor.
func transactions(workers int, hot bool) func(Engine, params) (measure, error) {
	return func(e Engine, p params) (measure, error) {
		accounts := p.keys
		if hot {
			accounts = hotKeys
			if err := fill(e, hotKeys, nil, accountSize); err != nil {
				return measure{}, err
			}
		}
		if accounts < txnKeys {
			return measure{}, fmt.Errorf("transactions over %d accounts, fewer than the %d of one transaction", accounts, txnKeys)
		}
		ws := make([]*transferer, workers)
		for g := range ws {
			ws[g] = &transferer{rng: rand.New(rand.NewPCG(seedTxn, uint64(g)))}
		}
		ops, d, err := parallel(workers, p.duration, func(g int, _ uint64) error {
			return ws[g].transfer(e.(transactor), accounts)
		})
		m := measure{ops: ops, elapsed: d}
		for _, w := range ws {
			m.aborts += w.aborts
		}
		if err != nil {
			return m, err
		}
		return m, checkAccounts(e, accounts, ops)
	}
}

// checkAccounts reads accounts 0..accounts-1 and checks each, that their
// balances sum to zero and that their writes sum to txnKeys × commits.
func checkAccounts(e Engine, accounts int, commits int64) error {
	var c checker
	var balances, writes uint64
	key := make([]byte, 0, keySize)
	for k := range uint64(accounts) {
		err := e.Get(appendKey(key[:0], k), func(v []byte) error {
			a, err := c.account(v, k)
			balances += a.balance
			writes += a.writes
			return err
		})
		if err != nil {
			return fmt.Errorf("check accounts: get key %d: %w", k, err)
		}
	}
	if balances != 0 {
		return fmt.Errorf("check accounts: balances sum to %d, want 0", int64(balances))
	}
	if want := uint64(commits) * txnKeys; writes != want {
		return fmt.Errorf("check accounts: %d writes, want %d for %d commits", writes, want, commits)
	}
	return nil
}

// counter is one goroutine of a counter workload.
type counter struct {
	rng    *rand.Rand
	key    []byte
	value  []byte // kept unchanged until the transaction ends
	added  [hotKeys]uint64
	aborts int64
}

// counters returns a counter workload: counterWorkers goroutines, each
// adding 1 to a uniformly random one of hotKeys counters with add, over
// and over for the workload's duration, into an empty database; then,
// untimed, every counter is read and must hold the increments added to it.
// One op is one increment; add returns the aborts it went through.
func counters(add func(e Engine, w *counter, k uint64) (aborts int, err error)) func(Engine, params) (measure, error) {
	return func(e Engine, p params) (measure, error) {
		ws := make([]*counter, counterWorkers)
		for g := range ws {
			ws[g] = &counter{rng: rand.New(rand.NewPCG(seedCounters, uint64(g)))}
		}
		ops, d, err := parallel(counterWorkers, p.duration, func(g int, _ uint64) error {
			w := ws[g]
			k := w.rng.Uint64N(hotKeys)
			w.key = appendKey(w.key[:0], k)
			aborts, err := add(e, w, k)
			w.aborts += int64(aborts)
			if err != nil {
				return fmt.Errorf("add to key %d: %w", k, err)
			}
			w.added[k]++
			return nil
		})
		m := measure{ops: ops, elapsed: d}
		for _, w := range ws {
			m.aborts += w.aborts
		}
		if err != nil {
			return m, err
		}
		return m, checkCounters(e, ws)
	}
}

// one is the operand of a counter increment.
var one = binary.LittleEndian.AppendUint64(nil, 1)

// mergeOne adds 1 to key k's counter with Merge. e is a merger.
func mergeOne(e Engine, w *counter, _ uint64) (int, error) {
	return 0, e.(merger).Merge(w.key, one)
}

// updateOne adds 1 to key k's counter in a transaction: it reads the
// counter (0 if absent) and writes it back one higher. e is a transactor.
func updateOne(e Engine, w *counter, k uint64) (int, error) {
	return e.(transactor).Update(func(tx txn) error {
		var n uint64
		err := tx.Get(w.key, func(v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("key %d: counter of %d bytes, want 8", k, len(v))
			}
			n = binary.LittleEndian.Uint64(v)
			return nil
		})
		if err != nil && !errors.Is(err, errNotFound) {
			return err
		}
		w.value = binary.LittleEndian.AppendUint64(w.value[:0], n+1)
		return tx.Put(w.key, w.value)
	})
}

// checkCounters reads every counter and checks that it holds what the
// workers added to it; a counter none added to must be absent.
func checkCounters(e Engine, ws []*counter) error {
	key := make([]byte, 0, keySize)
	for k := range uint64(hotKeys) {
		var want uint64
		for _, w := range ws {
			want += w.added[k]
		}
		err := e.Get(appendKey(key[:0], k), func(v []byte) error {
			if len(v) != 8 || binary.LittleEndian.Uint64(v) != want {
				return fmt.Errorf("counter holds %x, want %d", v, want)
			}
			return nil
		})
		if errors.Is(err, errNotFound) && want == 0 {
			continue
		}
		if err != nil {
			return fmt.Errorf("check counters: key %d: %w", k, err)
		}
	}
	return nil
}
