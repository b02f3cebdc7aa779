// The writes every fixture's generator makes, and the model of their
// result. This file is the same for every commit; main.go beside it adapts
// them to one commit's API (see store). generate.sh copies both into a
// worktree of that commit as cmd/fixturegen.

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// kind is what an op writes.
type kind int

const (
	set kind = iota
	del
	// delRange deletes [key, value): either bound empty is unbounded.
	delRange
	// merge adds value, a little-endian uint64, to the key's counter
	// (simpledb.Uint64AddMerger).
	merge
)

// op is one write; a batch is a slice of them, applied in order.
type op struct {
	kind       kind
	key, value []byte
}

// format is the format a generator's commit writes, and what it can hold.
type format struct {
	LogFormat   int    `json:"log_format"`
	TableFormat int    `json:"table_format"`
	Merger      string `json:"merger"` // "" or "strata.uint64add"
}

func (f format) rangeDels() bool { return f.LogFormat >= 4 }
func (f format) merges() bool    { return f.Merger != "" }

// store is a database opened through one commit's API, with small tables,
// no background compaction and logs in plain files (see plainFS).
type store interface {
	// write commits ops as one synced batch (or a single synced Put,
	// Delete, DeleteRange or Merge).
	write(ops []op) error
	// flush turns the memstore into an L0 table.
	flush() error
	// compact compacts everything into the deepest level, at least L1.
	compact() error
}

// The workload's shape: about 1,900 keys written, 1,550 to 1,700 of them
// left; a fixture of 320 to 390 KB, half of it expected.json.
const (
	textKeys   = 1600
	binaryKeys = 160
	counters   = 16
	l0Tables   = 3
	// bounded range deletions start at a text key in [rangeLo, rangeHi),
	// away from the keys with large values.
	rangeLo, rangeHi = 200, 1400
)

// largeValues are text keys whose values are large, and when each is
// written: phase "bottom" (compacted into L1), "l0" (the first L0 table)
// or "log" (left in the log).
var largeValues = []struct {
	index int
	size  int
	phase string
}{
	{7, 40 << 10, "bottom"},
	{100, 4 << 10, "bottom"},
	{1500, 4 << 10, "bottom"},
	{1510, 4 << 10, "l0"},
	{1520, 4 << 10, "log"},
}

// workload makes the ops, deterministically from its seed, and keeps the
// model of their result: the state a reader must find.
type workload struct {
	f   format
	rng *rand.Rand
	// keys are what churn picks from: the text keys but the large
	// values', the binary keys, then the new text keys.
	keys  [][]byte
	next  int // the next new text key
	state map[string][]byte
	// written holds every key put or merged, so that those not in state
	// are the keys a read must not find.
	written map[string]bool
}

func newWorkload(f format) *workload {
	w := &workload{f: f, rng: rand.New(rand.NewPCG(20261201, 1)), state: map[string][]byte{}, written: map[string]bool{}}
	large := map[int]bool{}
	for _, l := range largeValues {
		large[l.index] = true
	}
	for i := range textKeys {
		if !large[i] {
			w.keys = append(w.keys, textKey(i))
		}
	}
	w.next = textKeys
	// Binary keys never start with a printable byte, so none is a text
	// key; some are one byte, some hold zeros, some are prefixes of others.
	seen := map[string]bool{}
	for _, k := range [][]byte{{0x00}, {0x00, 0x00}, {0xff}, {0xff, 0xff, 0xff}, {0x80, 0x00, 0x01}} {
		seen[string(k)] = true
		w.keys = append(w.keys, k)
	}
	for len(seen) < binaryKeys {
		k := make([]byte, 1+w.rng.IntN(24))
		for i := range k {
			k[i] = byte(w.rng.IntN(256))
		}
		if k[0] >= 0x20 && k[0] < 0x80 {
			k[0] ^= 0x80
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			w.keys = append(w.keys, k)
		}
	}
	return w
}

func textKey(i int) []byte    { return fmt.Appendf(nil, "user/%05d", i) }
func counterKey(i int) []byte { return fmt.Appendf(nil, "counter/%02d", i) }

// value returns n bytes: random, or text that compresses, half and half.
func (w *workload) value(n int) []byte {
	v := make([]byte, n)
	if w.rng.IntN(2) == 0 {
		for i := range v {
			v[i] = byte(w.rng.IntN(256))
		}
		return v
	}
	word := fmt.Appendf(nil, "value-%d;", w.rng.IntN(1000))
	for i := range v {
		v[i] = word[i%len(word)]
	}
	return v
}

// smallValue returns a value of a small size: empty, a few bytes, or about
// 100 bytes.
func (w *workload) smallValue() []byte {
	switch r := w.rng.IntN(100); {
	case r < 15:
		return []byte{}
	case r < 75:
		return w.value(1 + w.rng.IntN(16))
	default:
		return w.value(80 + w.rng.IntN(41))
	}
}

func (w *workload) anyKey() []byte { return w.keys[w.rng.IntN(len(w.keys))] }

func (w *workload) operand() []byte {
	return binary.LittleEndian.AppendUint64(nil, uint64(1+w.rng.IntN(1000)))
}

// churn returns n ops of overwrites, deletions, new keys, and, where the
// format has them, range deletions and merges.
func (w *workload) churn(n int) []op {
	var ops []op
	for range n {
		switch r := w.rng.IntN(100); {
		case r < 55:
			ops = append(ops, op{set, w.anyKey(), w.smallValue()})
		case r < 72:
			ops = append(ops, op{del, w.anyKey(), nil})
		case r < 80:
			k := textKey(w.next)
			w.next++
			w.keys = append(w.keys, k)
			ops = append(ops, op{set, k, w.smallValue()})
		case r < 82 && w.f.rangeDels():
			i := rangeLo + w.rng.IntN(rangeHi-rangeLo)
			ops = append(ops, op{delRange, textKey(i), textKey(i + 1 + w.rng.IntN(30))})
		case r >= 82 && w.f.merges():
			ops = append(ops, op{merge, counterKey(w.rng.IntN(counters)), w.operand()})
		default:
			ops = append(ops, op{set, w.anyKey(), w.smallValue()})
		}
	}
	return ops
}

// bottom is what is compacted into L1: every key, a few large values,
// counters' bases and operands, then some churn.
func (w *workload) bottom() []op {
	var ops []op
	for _, i := range w.rng.Perm(len(w.keys)) {
		ops = append(ops, op{set, w.keys[i], w.smallValue()})
	}
	ops = append(ops, w.large("bottom")...)
	if w.f.merges() {
		for i := range counters {
			if i%2 == 0 {
				ops = append(ops, op{set, counterKey(i), binary.LittleEndian.AppendUint64(nil, uint64(1000*i))})
			}
			for range w.rng.IntN(4) {
				ops = append(ops, op{merge, counterKey(i), w.operand()})
			}
		}
	}
	return append(ops, w.churn(200)...)
}

func (w *workload) large(phase string) []op {
	var ops []op
	for _, l := range largeValues {
		if l.phase == phase {
			ops = append(ops, op{set, textKey(l.index), w.value(l.size)})
		}
	}
	return ops
}

// l0 is what the L0 table of round holds: churn, and, where the format
// has them, unbounded range deletions, and merges onto counters deleted,
// put and range-deleted just before.
func (w *workload) l0(round int) []op {
	ops := w.churn(220)
	switch round {
	case 0:
		ops = append(ops, w.large("l0")...)
		if w.f.merges() {
			ops = append(ops, op{del, counterKey(1), nil}, op{merge, counterKey(1), w.operand()})
		}
	case 1:
		if w.f.rangeDels() {
			// Unbounded above, over binary keys, and a key written back
			// in the same batch after its deletion.
			ops = append(ops, op{delRange, []byte{0xf0}, nil}, op{set, []byte{0xf8, 0x01}, w.smallValue()})
		}
		if w.f.merges() {
			ops = append(ops, op{set, counterKey(3), binary.LittleEndian.AppendUint64(nil, 7)})
		}
	case 2:
		if w.f.rangeDels() && w.f.merges() {
			ops = append(ops, op{delRange, counterKey(10), counterKey(14)}, op{merge, counterKey(11), w.operand()})
		}
	}
	return ops
}

// log is what is left in the log only.
func (w *workload) log() []op {
	ops := append(w.churn(200), w.large("log")...)
	if w.f.rangeDels() {
		// Unbounded below, over binary keys, then one written back.
		ops = append(ops, op{delRange, nil, []byte{0x00, 0x40}}, op{set, []byte{0x00, 0x01}, w.smallValue()})
	}
	if w.f.merges() {
		ops = append(ops, op{merge, counterKey(12), w.operand()}, op{merge, counterKey(15), w.operand()})
	}
	return append(ops, op{set, []byte("last"), []byte("written last, left in the log")})
}

// apply writes ops in batches of 1 to 40 and applies them to the model.
func (w *workload) apply(s store, ops []op) error {
	for len(ops) > 0 {
		n := min(len(ops), 1+w.rng.IntN(40))
		if err := s.write(ops[:n]); err != nil {
			return err
		}
		for _, o := range ops[:n] {
			w.model(o)
		}
		ops = ops[n:]
	}
	return nil
}

// model applies o to the state: a merge onto nothing is its operand.
func (w *workload) model(o op) {
	switch o.kind {
	case set:
		w.state[string(o.key)] = o.value
		w.written[string(o.key)] = true
	case del:
		delete(w.state, string(o.key))
	case delRange:
		for k := range w.state {
			if (len(o.key) == 0 || k >= string(o.key)) && (len(o.value) == 0 || k < string(o.value)) {
				delete(w.state, k)
			}
		}
	case merge:
		v := binary.LittleEndian.Uint64(o.value)
		if old, ok := w.state[string(o.key)]; ok {
			v += binary.LittleEndian.Uint64(old)
		}
		w.state[string(o.key)] = binary.LittleEndian.AppendUint64(nil, v)
		w.written[string(o.key)] = true
	}
}

// generate writes the fixture into out: the database in out/db, left
// open, and out/expected.json. The caller exits without closing it, so
// that the last writes are only in the log.
func generate(out string, f format, open func(dir string) (store, error)) error {
	dir := filepath.Join(out, "db")
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists: the fixture is written into a fresh directory", dir)
	}
	w := newWorkload(f)
	s, err := open(dir)
	if err != nil {
		return err
	}
	if err := w.apply(s, w.bottom()); err != nil {
		return err
	}
	if err := s.compact(); err != nil {
		return err
	}
	for round := range l0Tables {
		if err := w.apply(s, w.l0(round)); err != nil {
			return err
		}
		if err := s.flush(); err != nil {
			return err
		}
	}
	if err := w.apply(s, w.log()); err != nil {
		return err
	}
	return w.writeExpected(filepath.Join(out, "expected.json"))
}

// writeExpected writes expected.json: the format; the final state, one
// [key, value] pair a line in key order, both in standard base64; and the
// keys written but deleted since, in key order:
//
//	{"log_format":1,"table_format":1,"merger":"","state":[
//	["AA==",""],
//	["dXNlci8wMDAwMA==","dmFsdWUtNDI7dmFs"],
//	...
//	],"absent":[
//	"dXNlci8wMDAxOQ==",
//	...
//	]}
func (w *workload) writeExpected(path string) error {
	head, err := json.Marshal(w.f)
	if err != nil {
		return err
	}
	var state, absent []string
	for _, k := range slices.Sorted(maps.Keys(w.written)) {
		key := base64.StdEncoding.EncodeToString([]byte(k))
		if v, ok := w.state[k]; ok {
			state = append(state, fmt.Sprintf("[%q,%q]", key, base64.StdEncoding.EncodeToString(v)))
		} else {
			absent = append(absent, fmt.Sprintf("%q", key))
		}
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-1])
	fmt.Fprintf(&b, ",\"state\":[\n%s\n],\"absent\":[\n%s\n]}\n", strings.Join(state, ",\n"), strings.Join(absent, ",\n"))
	return os.WriteFile(path, b.Bytes(), 0o644)
}
