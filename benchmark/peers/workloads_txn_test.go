package main

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An account is its key's fill value, balance and writes at zero, and
// every other byte is checked.
func TestAccountsAreFillValuesWithTwoFields(t *testing.T) {
	var c checker
	require.Equal(t, appendValue(nil, 42, accountSize), appendAccount(nil, 42, account{}))

	a := account{balance: 1<<64 - 17, writes: 3} // a balance of -17
	v := appendAccount([]byte("prefix"), 42, a)[len("prefix"):]
	got, err := c.account(v, 42)
	require.NoError(t, err)
	require.Equal(t, a, got)

	_, err = c.account(v, 43)
	require.Error(t, err, "another key's account")
	_, err = c.account(v[:accountSize-1], 42)
	require.Error(t, err, "truncated")
	v[accountSize-1] ^= 1
	_, err = c.account(v, 42)
	require.Error(t, err, "a fill byte flipped")
}

// The transaction and counter workloads commit, count every abort the
// engine reports, and pass their checks on an engine that loses nothing.
func TestTransactionsCountAborts(t *testing.T) {
	for _, tc := range []struct {
		workload   string
		abortEvery int
	}{
		{"txn1", 0},
		{"txn8", 3},
		{"txn8sync", 0},
		{"txnhot", 3},
		{"countertxn", 5},
		{"countermerge", 0},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			w, err := findWorkload(tc.workload)
			require.NoError(t, err)
			p := params{keys: 500, duration: 20 * time.Millisecond}
			e := newMapEngine()
			if w.filled {
				require.NoError(t, fill(e, p.keys, fillOrder(p.keys), w.valueSize(p)))
			}
			e.abortEvery = tc.abortEvery
			m, err := w.run(e, p)
			require.NoError(t, err)
			require.Positive(t, m.ops)
			wantAborts := 0
			if tc.abortEvery > 0 {
				wantAborts = e.commits / tc.abortEvery
				require.Positive(t, wantAborts)
			}
			require.EqualValues(t, wantAborts, m.aborts)
		})
	}
}

// A lost write leaves every value well formed, and the check after the
// timed part catches it: the accounts' writes (and balances) or a counter
// no longer add up.
func TestTransactionsFailOnLostWrites(t *testing.T) {
	for name, want := range map[string]string{
		"txn8": "check accounts", "txnhot": "check accounts",
		"countertxn": "check counters", "countermerge": "check counters",
	} {
		t.Run(name, func(t *testing.T) {
			w, err := findWorkload(name)
			require.NoError(t, err)
			p := params{keys: 500, duration: 20 * time.Millisecond}
			e := newMapEngine()
			if w.filled {
				require.NoError(t, fill(e, p.keys, fillOrder(p.keys), w.valueSize(p)))
			}
			e.dropEvery = 7
			_, err = w.run(e, p)
			require.ErrorContains(t, err, want)
		})
	}
}

// A counter of the wrong length, or one missing, fails the counter
// workloads: in the transaction that reads it, or in the check after.
func TestCountersFailOnWrongValues(t *testing.T) {
	faults := map[string]func(e *mapEngine){
		"truncated": func(e *mapEngine) { e.damage = func(_ string, v []byte) []byte { return v[:len(v)-1] } },
		"missing":   func(e *mapEngine) { e.hidden = func(key string) bool { return key[keySize-1] == '7' } },
	}
	for _, name := range []string{"countertxn", "countermerge"} {
		for fault, apply := range faults {
			t.Run(name+"/"+fault, func(t *testing.T) {
				w, err := findWorkload(name)
				require.NoError(t, err)
				e := newMapEngine()
				apply(e)
				_, err = w.run(e, params{duration: 20 * time.Millisecond})
				require.Error(t, err)
			})
		}
	}
}

// Pebble's merge operator adds operands, newer and older alike, and
// refuses one that is not 8 bytes.
func TestPebbleMergerAddsUint64s(t *testing.T) {
	le := func(n uint64) []byte { return binary.LittleEndian.AppendUint64(nil, n) }
	m, err := uint64Adder.Merge(nil, le(5))
	require.NoError(t, err)
	require.NoError(t, m.MergeNewer(le(7)))
	require.NoError(t, m.MergeOlder(le(1<<40)))
	v, closer, err := m.Finish(true)
	require.NoError(t, err)
	require.Nil(t, closer)
	require.Equal(t, le(1<<40+12), v)

	require.Error(t, m.MergeNewer([]byte{1}))
	_, err = uint64Adder.Merge(nil, []byte("7 bytes"))
	require.Error(t, err)
}
