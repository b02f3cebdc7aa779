package simpledb

import (
	"sync/atomic"

	"github.com/stratadb/strata/memstore"
)

// mergeFolds decides when a merge operand folds into the newest version of
// its key in the active memstore (memstore.ApplyMerge) rather than adding
// a version: a hot counter then keeps one entry, and the memstore neither
// grows an index of its operands nor flushes them.
//
// A fold replaces what reads at sequence numbers from its own see; reads
// below still find the version under it in the memstore, but a flush
// writes the fold alone. So no snapshot may read between a fold's target
// and the fold, and no snapshot may begin at a sequence number a fold made
// in a group not yet published has passed. The pipeline applies under
// pub.mu (see apply); a snapshot is taken under DB.mu, which a publisher
// may need, so they meet through atomics: a merge announces itself (last)
// before it reads starting and floor; a snapshot announces itself
// (starting) before it reads last, and waits for that merge's
// publication. Either the merge sees the snapshot coming and does not
// fold, or the snapshot sees the merge and reads after it.
type mergeFolds struct {
	last     atomic.Uint64 // the sequence number of the last merge applied
	floor    atomic.Uint64 // the newest sequence number a snapshot reads at
	starting atomic.Int32  // snapshots being taken
}

// folder returns how the merge numbered seq may fold. The caller holds
// p.pub.mu.
func (p *commitPipeline) folder(seq uint64) memstore.Folder {
	f := &p.folds
	f.last.Store(seq)
	if f.starting.Load() > 0 {
		return memstore.Folder{}
	}
	return memstore.Folder{Merge: p.env.merge, Above: f.floor.Load()}
}

// beginSnapshot readies the pipeline for a snapshot at the visible
// sequence number: until endSnapshot, no merge folds, and every fold made
// before is published. The caller holds no lock.
func (p *commitPipeline) beginSnapshot() {
	if p.env.merge == nil {
		return // no merger, no fold
	}
	f := &p.folds
	f.starting.Add(1)
	if last := f.last.Load(); last > p.visible() {
		p.waitPublished(last)
	}
}

// endSnapshot ends beginSnapshot, the snapshot taken at seq (0: none): a
// fold onto a version at or below it would hide that version from the
// snapshot once flushed.
func (p *commitPipeline) endSnapshot(seq uint64) {
	if p.env.merge == nil {
		return
	}
	f := &p.folds
	for {
		floor := f.floor.Load()
		if seq <= floor || f.floor.CompareAndSwap(floor, seq) {
			break
		}
	}
	f.starting.Add(-1)
}
