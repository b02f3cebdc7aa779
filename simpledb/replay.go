package simpledb

import (
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/memstore"
)

// replayChunkBytes bounds the keys and values a replayer holds before it
// applies them.
const replayChunkBytes = 8 << 20

// replayer applies the writes a log walk accepts to a memstore in chunks,
// each sorted (memstore.ApplyAll): writes at random keys, inserted in key
// order, land beside each other in the memstore's list instead of at cold
// places in it. It copies each write, since the walk's slices last one
// record.
//
// Writes in ascending key order, which the memstore inserts one beside the
// other anyway, go straight to it while no chunk is held: copying and
// sorting them would only cost.
type replayer struct {
	m       *memstore.Memstore
	cmp     func(a, b []byte) int
	writes  []memstore.Write
	buf     []byte // the chunk's keys and values
	lastKey []byte // of the last write applied straight
}

func newReplayer(m *memstore.Memstore, cmp func(a, b []byte) int) *replayer {
	return &replayer{m: m, cmp: cmp}
}

func (r *replayer) apply(seq uint64, kind base.Kind, key, value []byte) error {
	if len(r.writes) == 0 && kind != base.KindRangeDelete && (r.lastKey == nil || r.cmp(r.lastKey, key) < 0) {
		r.lastKey = append(r.lastKey[:0], key...)
		return r.m.Apply(seq, kind, key, value)
	}
	// A write's slices keep the array they point into alive when append
	// moves buf to a larger one.
	at := len(r.buf)
	r.buf = append(append(r.buf, key...), value...)
	w := memstore.Write{Seq: seq, Kind: kind, Key: r.buf[at : at+len(key) : at+len(key)]}
	if value != nil {
		w.Value = r.buf[at+len(key) : len(r.buf) : len(r.buf)]
	}
	r.writes = append(r.writes, w)
	if len(r.buf) >= replayChunkBytes {
		return r.flush()
	}
	return nil
}

// flush applies the writes held.
func (r *replayer) flush() error {
	if len(r.writes) == 0 {
		return nil
	}
	err := r.m.ApplyAll(r.writes)
	clear(r.writes) // drop the references into buf
	r.writes, r.buf, r.lastKey = r.writes[:0], r.buf[:0], r.lastKey[:0]
	return err
}
