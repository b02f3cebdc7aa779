package simpledb

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/memstore"
)

// memTable is a memstore and the log that holds its writes.
type memTable struct {
	m      *memstore.Memstore
	logNum uint64
	logID  uint64 // the log's identity: see logIdentity
	// logSize is the log's length once a rotation closed it, 0 before.
	// abandoned: the log failed and was given up (see Resume); its file
	// is deleted, not recycled, once the memstore is flushed. Both are
	// guarded by DB.mu.
	logSize   uint64
	abandoned bool
	// writes counts groups appended to its log but not yet applied; a
	// flush waits for them. appended counts every group appended (guarded
	// by the commit pipeline's log lock).
	writes   sync.WaitGroup
	appended int
	// refs counts the read states that hold the memstore; installReadState,
	// under DB.mu, adds those of the state it installs, and the last to go
	// releases the memstore's memory (see newMemstore). Who reads it, and
	// until when:
	//   - a read, iterator, snapshot or checkpoint, through a read state
	//     it acquired (readStates.acquire), until it drops that state;
	//   - a group's apply, from its append (under the commit pipeline's
	//     log lock, to the active memstore) until it marks writes done:
	//     the memstore is in the current state until a flush installs its
	//     table, and the flush waits for writes first;
	//   - the flush scheduler's loop, while it is the oldest immutable
	//     memstore, which the current state holds until the flush
	//     installs the state without it;
	//   - a rotation, Resume's too, which makes it immutable under DB.mu.
	// Nothing else keeps a pointer into it, so once the last state goes
	// nothing can read it.
	refs atomic.Int32
}

func (mt *memTable) unref() {
	if mt.refs.Add(-1) == 0 {
		mt.m.Release()
	}
}

// readState is what a read needs: the memstores, newest first, and the
// version. Reads take a reference for their duration, so that flushes and
// compactions can install a new state with a pointer swap while the old
// one's tables stay until its last reader is done.
//
// The database holds one reference on the state in DB.reads, which it
// drops after swapping in the next under its lock (readStates.swap); every
// other reference is taken from one already held (ref): by
// readStates.acquire, under that lock while the state is still the one it
// holds, or from a reference the caller
// holds (an iterator's from a read's, a follower snapshot's view under
// Snapshot.mu while the snapshot holds it). So a released state is never
// reached again: the last unref frees its memstores (memTable.refs) and
// its version's tables (version.unref, table.unref).
type readState struct {
	mem  *memTable
	imm  []*memTable // oldest first
	v    *version
	refs atomic.Int32
}

// newReadState returns a read state of the active memstore mem, the
// immutable ones imm and version v, with one reference, the caller's, and
// a reference on each of them.
func newReadState(mem *memTable, imm []*memTable, v *version) *readState {
	rs := &readState{mem: mem, imm: slices.Clone(imm), v: v}
	rs.refs.Store(1)
	v.ref()
	mem.refs.Add(1)
	for _, mt := range rs.imm {
		mt.refs.Add(1)
	}
	return rs
}

// ref takes another reference on rs. The caller holds one already, or
// holds readStates.mu while rs is the state there, whose reference is
// dropped only after replacing it under that lock: a reference is never taken on a
// state released, whose memstores may be unmapped. A count that was zero
// is a bug, which panics here rather than read released memory later.
func (rs *readState) ref() {
	if rs.refs.Add(1) <= 1 {
		panic("simpledb: a reference taken on a released read state")
	}
}

func (rs *readState) unref() {
	if rs.refs.Add(-1) == 0 {
		rs.v.unref()
		rs.mem.unref()
		for _, mt := range rs.imm {
			mt.unref()
		}
	}
}

// installReadState publishes the current memstores and version to readers.
// The caller holds d.mu (or has not shared the database yet).
func (d *DB) installReadState() {
	rs := d.mu.memstores.readState(d.mu.versions.current())
	d.chargeMemstores()
	d.reads.swap(rs)
}

// applyEdit installs the version a durable edit makes (see
// versionSet.apply) and publishes it to readers. The caller holds d.mu.
func (d *DB) applyEdit(edit *manifest.Edit, added []levelTableRef, addedBlobs []*blobFile) {
	old := d.mu.versions.apply(edit, added, addedBlobs)
	d.installReadState()
	old.unref()
}

// chargeMemstores charges the memstores to the memory budget (see
// Options.MemoryBudget). A writable database charges all it may hold,
// 1+MaxImmutableMemstores of MemstoreSize, whether or not they exist yet,
// and a memstore's excess over MemstoreSize (the batch that filled it):
// the cache then never grows into room the next immutable memstore needs.
// Charging each memstore only while it exists would shrink the cache at
// every rotation and not save memory: the evicted blocks' chunks stay
// resident, waiting for the next blocks. A read-only database's memstore
// never grows: it is charged at its size. The caller holds d.mu, and calls
// it whenever the memstores change.
func (d *DB) chargeMemstores() {
	var charge int64
	if d.opts.ReadOnly {
		charge = d.mu.memstores.charge(0, 0)
	} else {
		charge = d.mu.memstores.charge(d.opts.MemstoreSize, d.opts.MaxImmutableMemstores)
	}
	d.cache.Reserve(charge - d.mu.memCharge) // nothing to do when unchanged, as after a compaction
	d.mu.memCharge = charge
}

// readStates holds the read state that reads acquire: the one pointer
// that readers and the code that changes memstores or versions share. It
// owns the database's reference on that state.
type readStates struct {
	mu sync.RWMutex
	rs *readState
}

// swap makes rs the state reads acquire (nil: none, after Close) and
// drops the reference on the one it replaces.
func (r *readStates) swap(rs *readState) {
	r.mu.Lock()
	old := r.rs
	r.rs = rs
	r.mu.Unlock()
	if old != nil {
		old.unref()
	}
}

// acquire returns the read state with a reference the caller must drop,
// or ErrClosed once Close has released it: its tables may be closed.
func (r *readStates) acquire() (*readState, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.rs == nil {
		return nil, ErrClosed
	}
	r.rs.ref()
	return r.rs, nil
}
