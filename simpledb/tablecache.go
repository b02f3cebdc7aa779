package simpledb

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/vfs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/sstables"
)

// tableCache bounds the tables whose files are open to Options.MaxOpenFiles.
// A table's Reader is a cached resource: a read pins it while it reads (a
// Get for its lookup, an iterator from its first move on the table to
// Close, a compaction for its run), reopening the file if it was closed, and
// the least recently used unpinned Readers are closed to make room for
// another. A pinned Reader is never closed, so when more tables than the
// bound are pinned at once the files open exceed it, until enough unpins
// close the excess.
//
// A reopen checks the file as Open did (openReader): a missing, resized or
// damaged file is ErrCorruption naming it, returned to the read. Blocks are
// cached under the table's number, not per Reader, so a reopened table finds
// the blocks its earlier Reader cached; they leave the block cache when the
// table's file is deleted (see table.unref).
//
// Its lock is innermost: nothing is locked under it, and no file is opened
// or closed while it is held.
type tableCache struct {
	capacity int
	// The tables' files, in dir, and how to read them: see readerOptions.
	dir        string
	fs         vfs.FS
	comparator *sstables.Comparator
	blocks     *sstables.Cache // the block cache
	mmap       bool            // Options.MmapTables
	logger     *slog.Logger
	events     *eventQueue // TableDeleted
	// retire removes what is left of an obsolete table once its last
	// reference is gone (removeTable; a test's own, to watch).
	retire func(num uint64)

	// blobs are the open blob files (see openBlob), which tables read
	// through the cache as their sstables.BlobSource.
	blobMu sync.Mutex
	blobs  atomic.Pointer[blobFiles]

	mu sync.Mutex
	// files counts the Readers open or being opened, in the cache or
	// outside it (a compaction's own), and those being closed: a slot is
	// given back only once its file is closed.
	files   int
	reopens int64 // tables a read opened again: Stats.TableReopens
	lru     table // sentinel of the open, unpinned tables: lru.next is the most recently used
}

// newTableCache returns a cache of at most capacity open tables, of the
// database in dir opened with o, sharing the block cache blocks.
func newTableCache(capacity int, dir string, o *Options, blocks *sstables.Cache) *tableCache {
	c := &tableCache{capacity: capacity, dir: dir, fs: o.FS, comparator: o.Comparator, blocks: blocks,
		mmap: o.MmapTables, logger: o.Logger}
	c.retire = c.removeTable
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	c.blobs.Store(&blobFiles{})
	return c
}

// stats returns the number of table files open and of reopens.
func (c *tableCache) stats() (files int, reopens int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files, c.reopens
}

// pin returns t's Reader, opening its file if it is closed, and keeps it
// open until the matching unpin. The caller holds a reference on t.
func (c *tableCache) pin(t *table) (*sstables.Reader, error) {
	c.mu.Lock()
	for t.reader == nil && t.opening != nil {
		// Another read is opening it: wait, then take its Reader, or try
		// again if its open failed.
		done := t.opening
		c.mu.Unlock()
		<-done
		c.mu.Lock()
	}
	if r := t.reader; r != nil {
		if t.pins == 0 {
			c.unlink(t)
		}
		t.pins++
		c.mu.Unlock()
		return r, nil
	}
	victims := c.makeRoom()
	c.files++
	done := make(chan struct{})
	t.opening = done
	c.mu.Unlock()

	closeReaders(victims)                      // before opening: the files open stay within the bound
	r, err := c.openReader(t.TableInfo, false) // a reopen is for a read, which needs the index and filter at once

	c.mu.Lock()
	defer c.mu.Unlock()
	t.opening = nil
	close(done)
	if err != nil {
		c.files--
		return nil, err
	}
	t.reader = r
	t.pins++
	c.reopens++
	return r, nil
}

// unpin releases a pin. The last one makes the Reader the most recently
// used, or closes it if more files than the bound are open: pins beyond
// it left no unpinned Reader to close until now.
func (c *tableCache) unpin(t *table) {
	c.mu.Lock()
	t.pins--
	if t.pins > 0 {
		c.mu.Unlock()
		return
	}
	if c.files <= c.capacity {
		c.pushFront(t)
		c.mu.Unlock()
		return
	}
	r := t.reader
	t.reader = nil
	c.mu.Unlock()
	c.closeCounted(r)
}

// reserve makes room for a table file about to be opened, closing the least
// recently used Readers if it must, and counts it: a new table's, which add
// then hands to the cache, or a compaction's own, until release.
func (c *tableCache) reserve() {
	c.mu.Lock()
	victims := c.makeRoom()
	c.files++
	c.mu.Unlock()
	closeReaders(victims)
}

// release gives back a slot that reserve counted.
func (c *tableCache) release() {
	c.mu.Lock()
	c.files--
	c.mu.Unlock()
}

// add makes r, opened in a slot reserve counted, t's Reader: open, unpinned
// and the most recently used; or closes it at once if pins hold more files
// open than the bound, as unpin would.
func (c *tableCache) add(t *table, r *sstables.Reader) {
	c.mu.Lock()
	if c.files > c.capacity {
		c.mu.Unlock()
		c.closeCounted(r)
		return
	}
	t.reader = r
	c.pushFront(t)
	c.mu.Unlock()
}

// drop closes t's Reader, once the last reference on t is gone, and
// retires the table if an edit removed it.
func (c *tableCache) drop(t *table) {
	if err := c.remove(t); err != nil {
		c.logger.Error("simpledb: close table", "table", t.Num, "err", err)
	}
	if t.obsolete.Load() {
		c.retire(t.Num)
	}
}

// removeTable evicts an obsolete table's blocks and deletes its file.
func (c *tableCache) removeTable(num uint64) {
	c.blocks.EvictTable(num)
	path := filenames.TablePath(c.dir, num)
	if err := c.fs.Remove(path); err != nil {
		c.logger.Error("simpledb: delete obsolete file", "file", path, "err", err)
		return
	}
	emit(c.events, c.events.listener().TableDeleted, FileInfo{Num: num, Path: path})
}

// readerOptions are the options for a table's Reader: mapped as
// Options.MmapTables says, sharing the block cache, or, for a
// compaction's own (once), neither.
func (c *tableCache) readerOptions(once bool) *sstables.ReaderOptions {
	o := &sstables.ReaderOptions{FS: c.fs, Comparator: c.comparator, NoMmap: once || !c.mmap, Blobs: c}
	if !once {
		o.Cache = c.blocks
	}
	return o
}

// remove closes t's Reader, if it is open, once the last reference on t is
// gone: nothing pins it.
func (c *tableCache) remove(t *table) error {
	c.mu.Lock()
	r := t.reader
	if r != nil {
		c.unlink(t)
		t.reader = nil
	}
	c.mu.Unlock()
	if r == nil {
		return nil
	}
	return c.closeCounted(r)
}

// closeCounted closes a Reader taken out of the cache and only then gives
// back its slot, so that no file is opened in it before this one is closed.
func (c *tableCache) closeCounted(r *sstables.Reader) error {
	err := r.Close()
	c.release()
	return err
}

// makeRoom takes the least recently used unpinned Readers out of the cache
// until one more file fits, and returns them for the caller to close once
// it has unlocked. The caller holds c.mu.
func (c *tableCache) makeRoom() []*sstables.Reader {
	var victims []*sstables.Reader
	for c.files >= c.capacity && c.lru.prev != &c.lru {
		t := c.lru.prev
		c.unlink(t)
		victims = append(victims, t.reader)
		t.reader = nil
		c.files--
	}
	return victims
}

// closeReaders closes Readers evicted from the cache. Nothing pins them, and
// Close fails only on a Reader closed already, which none is.
func closeReaders(rs []*sstables.Reader) {
	for _, r := range rs {
		r.Close()
	}
}

func (c *tableCache) pushFront(t *table) {
	t.prev, t.next = &c.lru, c.lru.next
	t.prev.next, t.next.prev = t, t
}

func (c *tableCache) unlink(t *table) {
	t.prev.next, t.next.prev = t.next, t.prev
	t.prev, t.next = nil, nil
}

// tableIter iterates one table through the table cache: its first
// positioning pins the table's Reader, and Close unpins it. A table that
// fails to open makes the positioning return false, with the error in Err.
type tableIter struct {
	t    *table
	opts *sstables.IterOptions
	it   *sstables.Iterator
	err  error
}

// pin opens the table iterator on the first positioning.
func (ti *tableIter) pin() bool {
	if ti.it != nil {
		return true
	}
	if ti.err != nil {
		return false
	}
	r, err := ti.t.tc.pin(ti.t)
	if err != nil {
		ti.err = err
		return false
	}
	ti.it = r.NewIterator(ti.opts)
	return true
}

func (ti *tableIter) First() bool            { return ti.pin() && ti.it.First() }
func (ti *tableIter) Last() bool             { return ti.pin() && ti.it.Last() }
func (ti *tableIter) SeekGE(key []byte) bool { return ti.pin() && ti.it.SeekGE(key) }
func (ti *tableIter) SeekLT(key []byte) bool { return ti.pin() && ti.it.SeekLT(key) }
func (ti *tableIter) Next() bool             { return ti.it != nil && ti.it.Next() }
func (ti *tableIter) Prev() bool             { return ti.it != nil && ti.it.Prev() }
func (ti *tableIter) Valid() bool            { return ti.it != nil && ti.it.Valid() }

func (ti *tableIter) Key() []byte {
	if ti.it == nil {
		return nil
	}
	return ti.it.Key()
}

func (ti *tableIter) Seq() uint64 {
	if ti.it == nil {
		return 0
	}
	return ti.it.Seq()
}

func (ti *tableIter) Kind() base.Kind {
	if ti.it == nil {
		return 0
	}
	return ti.it.Kind()
}

func (ti *tableIter) Value() []byte {
	if ti.it == nil {
		return nil
	}
	return ti.it.Value()
}

// BlobHandle is the table iterator's (see sstables.Iterator.BlobHandle).
func (ti *tableIter) BlobHandle() (sstables.BlobHandle, bool) {
	if ti.it == nil {
		return sstables.BlobHandle{}, false
	}
	return ti.it.BlobHandle()
}

// BlobTable is the table's name.
func (ti *tableIter) BlobTable() string {
	if ti.it == nil {
		return ""
	}
	return ti.it.BlobTable()
}

func (ti *tableIter) Err() error {
	if ti.err != nil || ti.it == nil {
		return ti.err
	}
	return ti.it.Err()
}

// Close closes the table iterator and unpins the table.
func (ti *tableIter) Close() error {
	if ti.it == nil {
		return nil
	}
	err := ti.it.Close()
	ti.it = nil
	ti.t.tc.unpin(ti.t)
	return err
}
