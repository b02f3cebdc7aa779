package simpledb

import (
	"github.com/stratadb/strata/internal/errs"
)

// Flush turns the active memstore into an L0 table now and waits until it
// (and every memstore before it) is flushed.
func (d *DB) Flush() error {
	w := &commitWaiter{done: make(chan commitResult, 1)}
	if err := d.commit(w); err != nil { // ErrClosed, or the background error
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.memstores.waitFlushed(w.rotated, func() error { return d.mu.failure.err() })
}

// Compact flushes, then compacts everything down into the deepest level
// that holds data (at least L1), dropping every deleted or overwritten
// version no snapshot needs. It is for tests and tools: the background
// compaction keeps the levels in shape on its own. A Close meanwhile
// waits for the running compaction, and Compact returns ErrClosed.
func (d *DB) Compact() error {
	if err := d.Flush(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// Counted with the background work, which Close waits for before it
	// closes the manifest. Close sets closed under d.mu before it waits, so
	// this Add cannot race its Wait.
	if d.closed.Load() {
		return ErrClosed
	}
	d.bgWG.Add(1)
	defer d.bgWG.Done()
	last := 1
	for level := NumLevels - 1; level > 1; level-- {
		if len(d.mu.versions.current().levels[level]) > 0 {
			last = level
			break
		}
	}
	for level := 0; level < last; level++ {
		for d.mu.compaction.busy() && !d.closed.Load() && d.mu.failure.err() == nil {
			d.cond.Wait()
		}
		switch {
		case d.closed.Load():
			return ErrClosed
		case d.mu.failure.err() != nil:
			return d.mu.failure.err()
		}
		if len(d.mu.versions.current().levels[level]) == 0 {
			continue
		}
		err := d.runCompaction(newCompaction(d.mu.versions.current(), level, d.mu.versions.current().levels[level]))
		d.cond.Broadcast()
		if err == ErrClosed {
			return err
		}
		if outOfSpace(err) && !d.mu.versions.manifestFailed() {
			// As in the background: a compaction out of space fails
			// nothing but itself, unless it failed to write the manifest.
			return errs.Errorf("simpledb: compact: %w", err)
		}
		if err != nil {
			return d.setBackgroundError(errs.Errorf("compaction: %w", err))
		}
	}
	return nil
}
