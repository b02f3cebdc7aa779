package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mapEngine is an in-memory Engine for testing the workloads. damage, when
// set, changes the values a Get or Scan returns; the keys hidden reports
// are absent from them, whatever was written. A checkpoint is a copy kept
// in checkpoints under its directory, damage and hidden keys included.
//
// Its transactions run one at a time. abortEvery, when positive, aborts
// every abortEvery-th commit, as a conflict would; dropEvery, when
// positive, loses every dropEvery-th write of a committed transaction or a
// merge, as a broken engine would.
type mapEngine struct {
	mu          sync.Mutex
	m           map[string][]byte
	damage      func(key string, v []byte) []byte
	hidden      func(key string) bool
	checkpoints map[string]*mapEngine

	abortEvery, dropEvery int
	commits, writes       int // commits tried and writes made, for them
}

func newMapEngine() *mapEngine {
	return &mapEngine{m: map[string][]byte{}, checkpoints: map[string]*mapEngine{}}
}

func (e *mapEngine) Put(key, value []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[string(key)] = bytes.Clone(value)
	return nil
}

func (e *mapEngine) Get(key []byte, visit func([]byte) error) error {
	e.mu.Lock()
	v, ok := e.m[string(key)]
	e.mu.Unlock()
	return e.visit(string(key), v, ok, visit)
}

// visit calls visit with v, key's value if ok, as damaged or hidden.
func (e *mapEngine) visit(key string, v []byte, ok bool, visit func([]byte) error) error {
	if !ok || e.hidden != nil && e.hidden(key) {
		return errNotFound
	}
	if e.damage != nil {
		v = e.damage(key, v)
	}
	return visit(v)
}

func (e *mapEngine) Update(fn func(txn) error) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for aborts := 0; ; aborts++ {
		t := &mapTxn{e: e, writes: map[string][]byte{}}
		if err := fn(t); err != nil {
			return aborts, err
		}
		if e.commits++; e.abortEvery > 0 && e.commits%e.abortEvery == 0 {
			continue
		}
		for k, v := range t.writes {
			e.write(k, v)
		}
		return aborts, nil
	}
}

// write sets key = value, unless dropEvery says to lose it. The caller
// holds e.mu.
func (e *mapEngine) write(key string, value []byte) {
	if e.writes++; e.dropEvery > 0 && e.writes%e.dropEvery == 0 {
		return
	}
	e.m[key] = value
}

func (e *mapEngine) Merge(key, operand []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := binary.LittleEndian.Uint64(operand)
	if v, ok := e.m[string(key)]; ok {
		n += binary.LittleEndian.Uint64(v)
	}
	e.write(string(key), binary.LittleEndian.AppendUint64(nil, n))
	return nil
}

// mapTxn is a transaction of a mapEngine, which holds e.mu while it runs.
type mapTxn struct {
	e      *mapEngine
	writes map[string][]byte
}

func (t *mapTxn) Get(key []byte, visit func([]byte) error) error {
	if v, ok := t.writes[string(key)]; ok {
		return visit(v)
	}
	v, ok := t.e.m[string(key)]
	return t.e.visit(string(key), v, ok, visit)
}

func (t *mapTxn) Put(key, value []byte) error {
	t.writes[string(key)] = bytes.Clone(value)
	return nil
}

func (e *mapEngine) Scan(visit func(key, value []byte) error) error {
	return e.scan(false, visit)
}

func (e *mapEngine) ScanReverse(visit func(key, value []byte) error) error {
	return e.scan(true, visit)
}

func (e *mapEngine) scan(descending bool, visit func(key, value []byte) error) error {
	keys := make([]string, 0, len(e.m))
	for k := range e.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if descending {
		slices.Reverse(keys)
	}
	for _, k := range keys {
		if e.hidden != nil && e.hidden(k) {
			continue
		}
		v := e.m[k]
		if e.damage != nil {
			v = e.damage(k, v)
		}
		if err := visit([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

func (e *mapEngine) Checkpoint(dir string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := newMapEngine()
	maps.Copy(c.m, e.m)
	c.damage, c.hidden = e.damage, e.hidden
	e.checkpoints[dir] = c
	return nil
}

func (e *mapEngine) DeleteRange(start, end []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	maps.DeleteFunc(e.m, func(k string, _ []byte) bool { return k >= string(start) && k < string(end) })
	return nil
}

// openCheckpoint opens e's checkpoints, for params.open.
func (e *mapEngine) openCheckpoint(dir string) (Engine, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.checkpoints[dir]
	if !ok {
		return nil, fmt.Errorf("no checkpoint in %s", dir)
	}
	return c, nil
}

func (e *mapEngine) Close() error { return nil }

func TestKeysAreZeroPaddedDecimal(t *testing.T) {
	require.Equal(t, "0000000000000042", string(appendKey(nil, 42)))
	require.Equal(t, "0000000000000000", string(appendKey(nil, 0)))
	require.Equal(t, "9999999999999999", string(appendKey(nil, 9999999999999999)))
	require.Negative(t, bytes.Compare(appendKey(nil, 9), appendKey(nil, 10)))
}

func TestFillOrderIsASeededPermutation(t *testing.T) {
	for _, n := range []int{1, 2, 3, 1000, 1023, 1024, 1025, 1 << 16} {
		a, b := fillOrder(n), fillOrder(n)
		seen := make([]bool, n)
		moved := 0
		for i := range uint64(n) {
			k := a.at(i)
			require.Less(t, k, uint64(n), "n=%d i=%d", n, i)
			require.False(t, seen[k], "n=%d: %d twice", n, k)
			require.Equal(t, k, b.at(i), "n=%d: not seeded", n)
			seen[k] = true
			if k != i {
				moved++
			}
		}
		if n >= 1000 {
			require.Greater(t, moved, n*9/10, "n=%d: barely shuffled", n)
		}
	}
	require.NotEqual(t, newPermutation(1000, 1).at(7), newPermutation(1000, 2).at(7))
}

// Values are deterministic per key and size: the same in every call (and
// so every process), starting with the key, different from key to key;
// the check takes the value of its key and size only, byte for byte.
func TestValuesAreDeterministicPerKeyAndSize(t *testing.T) {
	for _, n := range []int{minValueSize, defaultValueSize, syncValueSize, 4 << 10, 16 << 10, maxValueSize} {
		v := appendValue(nil, 42, n)
		require.Len(t, v, n)
		require.Equal(t, v, appendValue([]byte("prefix"), 42, n)[len("prefix"):], "n=%d", n)
		require.Equal(t, binary.BigEndian.AppendUint64(nil, 42), v[:8], "n=%d: starts with its key", n)
		require.NotEqual(t, v, appendValue(nil, 43, n), "n=%d", n)

		var c checker
		require.NoError(t, c.check(v, 42, n))
		require.Error(t, c.check(v, 43, n), "another key's")
		require.Error(t, c.check(v[:n-1], 42, n), "truncated")
		require.Error(t, c.check(append(bytes.Clone(v), 0), 42, n), "too long")
		flipped := bytes.Clone(v)
		flipped[n-1] ^= 1
		require.Error(t, c.check(flipped, 42, n), "last byte flipped")
	}
	var c checker
	require.Error(t, c.check(appendValue(nil, 42, defaultValueSize), 42, 4<<10), "a value of the default size read at 4 KiB")
}

// -value-size ranges over the values appendValue can make: from the 8
// bytes of the key's index to benchdata's whole pool.
func TestValueSizeBounds(t *testing.T) {
	for n, ok := range map[int]bool{
		0: false, minValueSize - 1: false, minValueSize: true, defaultValueSize: true,
		4 << 10: true, maxValueSize: true, maxValueSize + 1: false,
	} {
		if ok {
			require.NoError(t, checkValueSize(n), n)
		} else {
			require.Error(t, checkValueSize(n), n)
		}
	}
}

// Every read workload checks every value, at the default size and at 4
// KiB, so a wrong byte, a wrong length, a missing key or a missing entry
// fails it. The checkpoint workload checks its copy's; a transaction, the
// accounts it reads, which keep their size whatever the value size.
func TestReadsFailOnWrongValues(t *testing.T) {
	damages := map[string]func(key string, v []byte) []byte{
		"flipped last byte": func(_ string, v []byte) []byte {
			v = bytes.Clone(v)
			v[len(v)-1] ^= 1
			return v
		},
		"truncated": func(_ string, v []byte) []byte { return v[:len(v)-1] },
	}
	reads := []string{"readrandom", "readzipf", "scan", "scanreverse", "mixed", "checkpoint", "txn1", "txn8", "txnhot"}
	for _, valueSize := range []int{defaultValueSize, 4 << 10} {
		p := params{keys: 500, valueSize: valueSize, reads: 2000, duration: 50 * time.Millisecond}
		for _, name := range reads {
			w, err := findWorkload(name)
			require.NoError(t, err)
			e := newMapEngine()
			p.spare, p.open = "spare", e.openCheckpoint
			require.NoError(t, fill(e, p.keys, fillOrder(p.keys), w.valueSize(p)))
			_, err = w.run(e, p)
			require.NoError(t, err, "%s on good data, %d-byte values", name, valueSize)
			for dname, damage := range damages {
				e.damage = damage
				_, err := w.run(e, p)
				require.Error(t, err, "%s with a %s value, %d-byte values", name, dname, valueSize)
				e.damage = nil
			}
			e.hidden = func(key string) bool { return key[keySize-1] == '7' } // one key in ten
			_, err = w.run(e, p)
			require.Error(t, err, "%s with missing keys, %d-byte values", name, valueSize)
		}
	}
}

// The fills write -value-size values, and the transaction workloads' fill
// accounts of their own size, whatever -value-size says.
func TestFillsWriteTheirValueSize(t *testing.T) {
	p := params{keys: 100, valueSize: 4 << 10}
	for name, want := range map[string]int{
		"fillseq": 4 << 10, "fillrandom": 4 << 10, "readrandom": 4 << 10, "scan": 4 << 10, "mixed": 4 << 10,
		"txn1": accountSize, "txn8sync": accountSize,
	} {
		w, err := findWorkload(name)
		require.NoError(t, err)
		require.Equal(t, want, w.valueSize(p), name)
	}
	e := newMapEngine()
	_, err := runFillRandom(e, p)
	require.NoError(t, err)
	require.Len(t, e.m, p.keys)
	for k, v := range e.m {
		i, err := strconv.ParseUint(k, 10, 64)
		require.NoError(t, err)
		require.Equal(t, appendValue(nil, i, p.valueSize), v)
	}
}

func TestSyncedWritersWriteDistinctKeys(t *testing.T) {
	e := newMapEngine()
	m, err := syncedWriters(4)(e, params{duration: 20 * time.Millisecond})
	require.NoError(t, err)
	require.Positive(t, m.ops)
	require.Len(t, e.m, int(m.ops))
	for k, v := range e.m {
		i, err := strconv.ParseUint(k, 10, 64)
		require.NoError(t, err)
		require.Equal(t, appendValue(nil, i, syncValueSize), v)
	}
}

// The range deletion covers every key, and the scan after it must find
// none: a key past the range fails the workload.
func TestDeleteRangeLeavesNothing(t *testing.T) {
	p := params{keys: 500, valueSize: defaultValueSize}
	e := newMapEngine()
	require.NoError(t, fill(e, p.keys, fillOrder(p.keys), p.valueSize))
	m, err := runDeleteRange(e, p)
	require.NoError(t, err)
	require.EqualValues(t, 1, m.ops)
	require.Empty(t, e.m)

	require.NoError(t, fill(e, p.keys+1, nil, p.valueSize))
	_, err = runDeleteRange(e, p)
	require.ErrorContains(t, err, string(appendKey(nil, uint64(p.keys))))
}
