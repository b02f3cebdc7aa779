package sstables

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/bloom"
	"github.com/stratadb/strata/internal/offheap"
	"github.com/stratadb/strata/internal/rangedel"
	"github.com/stratadb/strata/recordio"
)

// Reader reads a table. Get, Has, Find and NewIterator are safe for
// concurrent use. Close is not safe to call while they run: every read must
// have returned, and every iterator be closed, before Close (see Close).
//
// Open reads only the footer, the properties, the index and the filter
// (with ReaderOptions.LoadOnRead, the index at the first read instead and
// the filter at the first point read): its cost grows with the number of
// blocks, not of keys. A point read then checks the filter, searches the
// index and reads one block.
type Reader struct {
	name     string
	id       uint64 // the cache's key for this table: ReaderOptions.CacheID, or unique per Open
	ownID    bool   // id is unique to this Reader: Close drops its blocks
	cache    *Cache
	blobs    BlobSource
	rr       *recordio.RandomReader
	cmp      func(a, b []byte) int
	bytewise bool       // the comparator is Bytewise: the index gets restart hints
	index    blockIter  // over the index block, checked at load: lookups and iterators take it
	slots    blockSlots // a point read's way to its cached data blocks, in a hinted cache; set with the index
	indexOff int64      // the index block's offset, for errors
	dataEnd  uint64     // where the data blocks end: at the filter, or the index
	filter   *bloom.Filter
	// indexBlock and filterBlock locate the index and the filter, which
	// are loaded (read, checked and held) at Open, or with
	// ReaderOptions.LoadOnRead by the first read that needs each, under
	// loadMu; indexLoaded and filterLoaded are set once they are.
	indexBlock, filterBlock   BlockHandle
	loadMu                    sync.Mutex
	indexLoaded, filterLoaded atomic.Bool
	meta                      Metadata
	// rangeDels are the table's range deletions, loaded at open.
	rangeDels rangedel.List
	// held are the index and filter blocks, unless the mapping holds
	// them: memory the Reader keeps from their load to Close, charged to the
	// cache meanwhile (see Cache), and outside the Go heap where the
	// system maps anonymous memory (mappings, which Close unmaps), so that
	// a database's indexes and filters do not raise the heap's goal.
	held     []heldBlock
	mappings [][]byte
	closed   atomic.Bool
}

type heldBlock struct {
	offset uint64
	block  []byte
}

// heldBytes is what the Reader charges to its cache: the blocks it holds,
// its index's hints and its block slots.
func (r *Reader) heldBytes() int64 {
	n := int64(r.index.hints.size() + r.slots.size())
	for _, h := range r.held {
		n += int64(len(h.block)) + cacheEntryOverhead
	}
	return n
}

// nextReaderID numbers the Readers opened without a CacheID. Their ids
// have the top bit set, so they never meet a CacheID.
var nextReaderID atomic.Uint64

const ownIDBit = 1 << 63

// lookup is a point read's scratch space, pooled so reads allocate only
// what they return. All Readers share the pool: one per Reader kept a
// block's buffer per processor for every open table.
type lookup struct {
	index, data blockIter
	buf         []byte
	blobBuf     []byte      // where a value read from a blob file lands
	pin         *cacheEntry // the cached block data reads, if any
}

var lookups = sync.Pool{New: func() any { return new(lookup) }}

// maxKeptLookupBuf bounds the block buffer a pooled lookup keeps: a
// larger block (one huge value) gets a buffer of its own next time.
const maxKeptLookupBuf = 64 << 10

// newLookup returns a lookup whose index iterator is over r's index.
func (r *Reader) newLookup() *lookup {
	lk := lookups.Get().(*lookup)
	lk.index.over(&r.index)
	return lk
}

// done unpins what lk pinned and pools it.
func (r *Reader) done(lk *lookup) {
	if lk.pin != nil {
		r.cache.unpin(lk.pin)
		lk.pin = nil
	}
	if cap(lk.buf) > maxKeptLookupBuf {
		lk.buf = nil
	}
	if cap(lk.blobBuf) > maxKeptLookupBuf {
		lk.blobBuf = nil
	}
	lookups.Put(lk)
}

// openFile opens the named table or blob file for reads at offsets, and
// returns its id in the cache: o.CacheID, or one of the cache's own,
// unique to this open (own).
func openFile(name string, o *ReaderOptions) (rr *recordio.RandomReader, id uint64, own bool, err error) {
	if o.CacheID&ownIDBit != 0 {
		return nil, 0, false, errs.Errorf("%w: open %s with CacheID %#x", ErrBadCacheID, name, o.CacheID)
	}
	if rr, err = recordio.OpenRandom(name, &recordio.ReaderOptions{FS: o.FS, NoMmap: o.NoMmap}); err != nil {
		return nil, 0, false, errs.Errorf("sstables: %w", err)
	}
	if o.CacheID != 0 {
		return rr, o.CacheID, false, nil
	}
	return rr, ownIDBit | nextReaderID.Add(1), true, nil
}

// Open opens the named table.
func Open(name string, opts *ReaderOptions) (*Reader, error) {
	o := opts.withDefaults()
	rr, id, own, err := openFile(name, &o)
	if err != nil {
		return nil, err
	}
	r := &Reader{name: name, id: id, ownID: own, cache: o.Cache, blobs: o.Blobs, rr: rr, cmp: o.Comparator.Compare, bytewise: o.Comparator == Bytewise}
	if err := r.load(o.Comparator, !o.LoadOnRead); err != nil {
		if r.cache != nil {
			r.cache.Reserve(-r.heldBytes()) // the index's, if the filter failed
		}
		r.unmap()
		rr.Close()
		return nil, err
	}
	return r, nil
}

// ReadMetadata returns the properties of the named table, reading only its
// footer and properties block, both checked: what a tool listing tables,
// or an owner checking a table's identity, needs without opening it for
// reads. opts gives the FS and the Comparator, which must be the table's
// (ErrComparatorMismatch); its other fields are not used. Damage is an
// error matching ErrCorruption.
func ReadMetadata(name string, opts *ReaderOptions) (Metadata, error) {
	o := opts.withDefaults()
	rr, err := recordio.OpenRandom(name, &recordio.ReaderOptions{FS: o.FS, NoMmap: true})
	if err != nil {
		return Metadata{}, errs.Errorf("sstables: %w", err)
	}
	defer rr.Close()
	r := &Reader{name: name, rr: rr, cmp: o.Comparator.Compare}
	if _, _, err := r.loadProperties(o.Comparator); err != nil {
		return Metadata{}, err
	}
	return r.meta, nil
}

// loadProperties reads and checks the footer and the properties, and
// returns the footer and its offset.
func (r *Reader) loadProperties(cmp *Comparator) (footer, int64, error) {
	size := r.rr.Size()
	footOff := size - footerRecordSize
	if footOff < recordio.FileHeaderSize {
		return footer{}, 0, base.Corruptf(r.name, 0, ErrBadFooter, "%d bytes is too short for a table", size)
	}
	raw, _, err := r.rr.RecordViewSized(footOff, footerRecordSize, nil)
	switch {
	case errors.Is(err, ErrCorruption), errors.Is(err, io.EOF): // io.EOF: the file ends in zeros
		return footer{}, 0, base.Corruptf(r.name, footOff, ErrBadFooter, "%v", err)
	case err != nil:
		return footer{}, 0, errs.Errorf("sstables: %w", err)
	}
	f, err := decodeFooter(raw, uint64(footOff))
	if err != nil {
		return footer{}, 0, base.Corruptf(r.name, footOff, ErrBadFooter, "%v", err)
	}
	props, _, err := r.readBlock(f.props, nil)
	if err != nil {
		return footer{}, 0, err
	}
	if r.meta, err = decodeMetadata(props); err != nil {
		return footer{}, 0, base.Corruptf(r.name, int64(f.props.Offset), ErrBadProperties, "%v", err)
	}
	r.meta.FileSize = uint64(size)
	if r.meta.FormatVersion != f.version {
		return footer{}, 0, base.Corruptf(r.name, int64(f.props.Offset), ErrBadProperties, "format version %d, the footer's is %d", r.meta.FormatVersion, f.version)
	}
	if r.meta.Comparator != cmp.Name {
		return footer{}, 0, errs.Errorf("sstables: %w: %s uses %q, not %q", ErrComparatorMismatch, r.name, r.meta.Comparator, cmp.Name)
	}
	return f, footOff, nil
}

// load reads and checks the footer, the properties and the range
// deletions, and the index and filter too if blocks is set.
func (r *Reader) load(cmp *Comparator, blocks bool) error {
	f, footOff, err := r.loadProperties(cmp)
	if err != nil {
		return err
	}
	r.indexBlock, r.filterBlock = f.index, f.filter
	r.indexOff = int64(f.index.Offset)
	r.dataEnd = f.index.Offset
	if f.filter.Length > 0 {
		r.dataEnd = f.filter.Offset
	}
	if err := r.loadRangeDels(uint64(footOff)); err != nil {
		return err
	}
	if !blocks {
		return nil
	}
	return r.blocks()
}

// loadIndex reads, checks and holds the index.
func (r *Reader) loadIndex() error {
	index, err := r.tableBlock(r.indexBlock)
	if err != nil {
		return err
	}
	if err := r.index.init(r.cmp, index, true); err != nil {
		r.index = blockIter{}
		return r.indexError(err)
	}
	if r.bytewise {
		r.index.buildHints()
	}
	if r.bytewise && r.cache != nil && r.cache.hinted {
		r.slots = newBlockSlots(&r.index)
	}
	return nil
}

// loadFilter reads, checks and holds the filter, if the table has one.
func (r *Reader) loadFilter() error {
	if r.filterBlock.Length == 0 {
		return nil
	}
	raw, err := r.tableBlock(r.filterBlock)
	if err != nil {
		return err
	}
	if r.filter, err = bloom.Decode(raw); err != nil {
		return base.Corruptf(r.name, int64(r.filterBlock.Offset), ErrBadFilter, "%v", err)
	}
	return nil
}

// indexReady returns once the index is loaded, loading it if the Reader
// was opened with ReaderOptions.LoadOnRead and no read has yet: iterators
// need no more.
func (r *Reader) indexReady() error {
	return r.ensure(&r.indexLoaded, r.loadIndex)
}

// blocks returns once the index and the filter are loaded, as indexReady
// does: point reads need both.
func (r *Reader) blocks() error {
	if err := r.indexReady(); err != nil {
		return err
	}
	return r.ensure(&r.filterLoaded, r.loadFilter)
}

// ensure runs load once, under loadMu, unless loaded is set, and sets it
// when load succeeds, charging what load held to the cache. A failed load
// holds nothing, and the next read tries again: a transient EIO does not
// poison the table.
func (r *Reader) ensure(loaded *atomic.Bool, load func() error) error {
	if loaded.Load() {
		return nil
	}
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if loaded.Load() {
		return nil
	}
	held, mapped, charged := len(r.held), len(r.mappings), r.heldBytes()
	if err := load(); err != nil {
		for _, m := range r.mappings[mapped:] {
			offheap.Unmap(m)
		}
		r.held, r.mappings = r.held[:held], r.mappings[:mapped]
		return err
	}
	if r.cache != nil {
		r.cache.Reserve(r.heldBytes() - charged)
	}
	loaded.Store(true)
	return nil
}

// Metadata describes the table. Its MinKey and MaxKey are the reader's
// own: they stay valid after Close, and must not be modified.
func (r *Reader) Metadata() Metadata { return r.meta }

// IndexSize returns the bytes the index takes in memory: 0 until it is
// loaded (see ReaderOptions.LoadOnRead).
func (r *Reader) IndexSize() int {
	if !r.indexLoaded.Load() {
		return 0
	}
	return len(r.index.entries) + len(r.index.restarts) + 4 + r.index.hints.size() + r.slots.size()
}

// Get returns the value of key's newest entry, as a copy the caller owns:
// for a merge operand, the operand, unfolded. It returns ErrNotFound when
// the table holds no entry for key or the newest one is a tombstone.
func (r *Reader) Get(key []byte) ([]byte, error) {
	var value []byte
	kind, found, err := r.find(key, r.hash(key), MaxSeq, func(v []byte) { value = bytes.Clone(v) })
	if err != nil {
		return nil, err
	}
	if !found || kind == KindDelete {
		return nil, ErrNotFound
	}
	return value, nil
}

// Has reports whether key has a live value: an entry whose newest version
// is not a tombstone.
func (r *Reader) Has(key []byte) (bool, error) {
	kind, found, err := r.find(key, r.hash(key), MaxSeq, nil)
	return found && kind != KindDelete, err
}

// Find looks up the newest entry of key with a sequence number at most seq:
// found is false when the table holds none. A tombstone is found too, with
// kind KindDelete, because it hides older versions in other tables; so is
// a range tombstone of the table's, at most seq, that covers key and is
// newer than its newest entry (the value is then not passed to use). The
// value is passed to use, which may be nil, without a copy: it lies in the
// table's read-only mapping (a write faults), a cached block other readers
// share, or a buffer the next lookup reuses, so use must neither modify it
// nor keep it after returning. Copy it to keep it.
func (r *Reader) Find(key []byte, seq uint64, use func(value []byte)) (kind Kind, found bool, err error) {
	return r.find(key, r.hash(key), seq, use)
}

// KeyHash is a key's hash for the tables' bloom filters.
type KeyHash uint64

// HashKey returns key's filter hash, for FindHash.
func HashKey(key []byte) KeyHash { return KeyHash(bloom.Hash(key)) }

// FindHash is Find for a key whose hash, HashKey(key), the caller has
// computed: a lookup across many tables hashes the key once. Another hash
// makes the filter answer for another key, so the key may be missed. use
// gets the value on Find's terms: not to be modified or kept.
func (r *Reader) FindHash(key []byte, hash KeyHash, seq uint64, use func(value []byte)) (kind Kind, found bool, err error) {
	return r.find(key, hash, seq, use)
}

// hash returns key's filter hash; a table without a filter needs none.
func (r *Reader) hash(key []byte) KeyHash {
	if r.filterBlock.Length == 0 {
		return 0
	}
	return HashKey(key)
}

func (r *Reader) find(key []byte, hash KeyHash, seq uint64, use func([]byte)) (Kind, bool, error) {
	if r.closed.Load() {
		return 0, false, ErrClosed
	}
	if err := r.blocks(); err != nil {
		return 0, false, err
	}
	// A range tombstone covers key whatever the filter says about it.
	tomb := r.rangeDelSeq(key, seq)
	if r.filter != nil && !r.filter.MayContainHash(uint64(hash)) {
		return KindDelete, tomb > 0, nil
	}
	lk := r.newLookup()
	defer r.done(lk)

	// The block slots name the index entry and, in its slot, the block
	// cached, most of the time: then the index is not read. They do while
	// the cache's point reads mostly hit (readGate).
	var slot *atomic.Pointer[cacheEntry]
	if r.slots.slots != nil && r.cache.gate.slots.Load() {
		entry, known := r.slots.entry(key)
		if known {
			if slot = r.slots.at(entry); slot == nil {
				return KindDelete, tomb > 0, nil // past the last block
			}
		}
	}
	h, found, err := r.slotBlock(slot, &lk.data, &lk.pin)
	if err != nil {
		return 0, false, err
	}
	if !found {
		if !lk.index.seekGE(key, seq) {
			if lk.index.err != nil {
				return 0, false, r.indexError(lk.index.err)
			}
			return KindDelete, tomb > 0, nil
		}
		if h, err = r.loadBlock(&lk.index, &lk.data, &lk.buf, &lk.pin, slot); err != nil {
			return 0, false, err
		}
	}
	if r.slots.slots != nil && sampled(hash) {
		r.cache.noteRead(lk.pin != nil) // pinned: found cached
	}
	it := &lk.data
	if !it.seekGE(key, seq) {
		if it.err != nil {
			return 0, false, r.blockError(h, it.err)
		}
		return KindDelete, tomb > 0, nil
	}
	if r.cmp(it.key, key) != 0 || base.TrailerSeq(it.trailer) < tomb {
		return KindDelete, tomb > 0, nil
	}
	kind, err := r.entryKind(it, h)
	if err != nil {
		return 0, false, err
	}
	if kind == kindSetBlob {
		if use != nil {
			if err := r.blobValue(it.value, h, &lk.blobBuf, true, nil, use); err != nil {
				return 0, false, err
			}
		}
		return KindSet, true, nil
	}
	if use != nil {
		use(it.value)
	}
	return kind, true, nil
}

// readBlock reads the block at h, which Open or decodeHandle checked lies
// in the file: one ReadAt when the file is not mapped. Damage is recordio's
// corruption error, naming the file and offset; any other failure, such as
// an EIO, is returned wrapped and still matches its cause.
func (r *Reader) readBlock(h BlockHandle, buf []byte) ([]byte, bool, error) {
	block, inPlace, err := r.rr.RecordViewSized(int64(h.Offset), int64(h.Length), buf)
	switch {
	case err == nil, errors.Is(err, ErrCorruption):
		return block, inPlace, err
	case errors.Is(err, recordio.ErrClosed):
		return nil, false, ErrClosed
	}
	return nil, false, errs.Errorf("sstables: %w", err)
}

// tableBlock reads the index or the filter block at h for loadBlocks,
// which the Reader then holds. A Reader with a stable CacheID takes it from the
// cache, where the table's last Reader left it at Close, rather than
// reading, checking and decompressing it again: that is most of an Open's
// cost (a 64 MiB table's index and filter are about 300 KB).
func (r *Reader) tableBlock(h BlockHandle) ([]byte, error) {
	if r.cache != nil && !r.ownID {
		if e, ok := r.cache.take(cacheKey{table: r.id, offset: h.Offset}); ok {
			block := r.hold(h, e.block)
			r.cache.unpin(e)
			return block, nil
		}
	}
	block, inPlace, err := r.readBlock(h, nil)
	if err == nil && !inPlace {
		block = r.hold(h, block)
	}
	return block, err
}

// hold keeps a copy of block, at h, until Close, and returns the copy:
// off the Go heap where the system maps memory, else in it.
func (r *Reader) hold(h BlockHandle, block []byte) []byte {
	held, err := offheap.Map(len(block))
	if err == nil {
		r.mappings = append(r.mappings, held)
	} else {
		held = make([]byte, len(block))
	}
	copy(held, block)
	held = held[:len(block):len(block)] // a slice of it that cannot be appended into
	r.held = append(r.held, heldBlock{h.Offset, held})
	return held
}

// unmap returns the memory hold mapped: nothing may read the blocks held
// any more.
func (r *Reader) unmap() {
	for _, m := range r.mappings {
		offheap.Unmap(m)
	}
	r.mappings, r.held = nil, nil
}

// loadBlock points data at the block the index iterator is at and returns
// its handle. scratch and pin are as for blockAt.
func (r *Reader) loadBlock(index, data *blockIter, scratch *[]byte, pin **cacheEntry, slot *atomic.Pointer[cacheEntry]) (BlockHandle, error) {
	h, err := decodeHandle(index.value, r.dataEnd)
	if err != nil {
		return h, r.indexError(err)
	}
	var hints restartHints
	block, err := r.blockAt(h, scratch, pin, &hints, slot)
	if err != nil {
		return h, err
	}
	if err := data.init(r.cmp, block, false); err != nil {
		return h, r.blockError(h, err)
	}
	data.hints = hints
	return h, nil
}

// blockAt returns the block at h, from the cache if it holds it, else
// read. A point read passes pin: it reads a cached block in place, pinned
// in *pin until it unpins it, and caches a copy of a block it reads. An
// iterator passes nil: it gets a copy of a cached block, which its
// positions may outlive, and caches nothing, so that one scan does not
// evict what the point reads gathered. *scratch is a buffer the caller
// recycles, where copies and blocks read land, unless read in place from
// the mapping. Blocks read in place are never cached: the cache would be
// charged for memory it does not own, and hold it past Close. A point
// read's cached block comes with its hints, in *hints, which a block it
// caches into room gets (bytewise order only); where the Reader keeps
// block slots, it passes the block's slot, if known: blockAt keeps there
// what it finds or caches.
func (r *Reader) blockAt(h BlockHandle, scratch *[]byte, pin **cacheEntry, hints *restartHints, slot *atomic.Pointer[cacheEntry]) ([]byte, error) {
	key := cacheKey{table: r.id, offset: h.Offset}
	if r.cache != nil {
		if pin != nil {
			var e *cacheEntry
			var ok bool
			if slot != nil {
				e, ok = r.cache.getSlot(key, slot)
			} else {
				e, ok = r.cache.get(key)
			}
			if ok {
				*pin, *hints = e, e.hints
				return e.block, nil
			}
		} else if block, ok := r.cache.copyBlock(key, *scratch); ok {
			*scratch = block[:0]
			return block, nil
		}
	}
	block, inPlace, err := r.readBlock(h, (*scratch)[:0])
	if err != nil {
		return nil, err
	}
	if !inPlace {
		*scratch = block[:0]
		if pin != nil && r.cache != nil {
			r.cache.fill(key, block, func() restartHints { return r.dataHints(block) }, slot)
		}
	}
	return block, nil
}

// slotBlock points data at the block cached in slot, pinned in *pin, and
// returns its handle (its offset: all errors need), if slot is not nil
// and holds an entry still cached; found is false otherwise.
func (r *Reader) slotBlock(slot *atomic.Pointer[cacheEntry], data *blockIter, pin **cacheEntry) (h BlockHandle, found bool, err error) {
	if slot == nil {
		return h, false, nil
	}
	e, ok := r.cache.pinSlot(r.id, slot)
	if !ok {
		return h, false, nil
	}
	*pin, h = e, BlockHandle{Offset: e.key.offset}
	if err := data.init(r.cmp, e.block, false); err != nil {
		return h, false, r.blockError(h, err)
	}
	data.hints = e.hints
	return h, true, nil
}

// dataHints returns the hints of a data block about to be cached, entry
// hints where its keys allow, else restart hints, in bytewise order and a
// cache that keeps them (hintedCache); none otherwise, nor for a block
// that does not decode (its reader meets the damage).
func (r *Reader) dataHints(block []byte) restartHints {
	if !r.bytewise || !r.cache.hinted {
		return restartHints{}
	}
	var it blockIter
	if it.init(r.cmp, block, false) != nil {
		return restartHints{}
	}
	if !it.buildEntryHints() {
		it.buildHints()
	}
	return it.hints
}

// entryKind returns the kind of the entry it is at: a point kind, or
// kindSetBlob in a table of a format that has it.
func (r *Reader) entryKind(it *blockIter, h BlockHandle) (Kind, error) {
	kind := it.kind()
	if !base.PointKind(kind) && (kind != kindSetBlob || r.meta.FormatVersion < formatVersionBlobs) {
		return 0, r.blockError(h, errBlock(fmt.Sprintf("entry of unknown kind %d", kind)))
	}
	return kind, nil
}

func (r *Reader) indexError(err error) error {
	if err == nil {
		return nil
	}
	return base.Corruptf(r.name, r.indexOff, ErrBadBlock, "index: %v", err)
}

func (r *Reader) blockError(h BlockHandle, err error) error {
	return base.Corruptf(r.name, int64(h.Offset), ErrBadBlock, "%v", err)
}

// Close releases the table. Every Get, Has and Find must have returned and
// every iterator be closed first: a read in flight on a memory-mapped table
// would touch unmapped memory. Iterators and values that alias the table
// must not be used afterwards (an iterator's next move returns false with
// ErrClosed). The table's blocks leave the cache, unless it was opened with
// a ReaderOptions.CacheID: they are then its owner's to drop (see
// Cache.EvictTable). Further calls return ErrClosed.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return ErrClosed
	}
	if r.cache != nil {
		r.cache.Reserve(-r.heldBytes())
		switch {
		case r.ownID:
			r.cache.EvictTable(r.id) // no one can ask for this Reader's blocks again
		default:
			for _, h := range r.held {
				r.cache.put(cacheKey{table: r.id, offset: h.offset}, h.block)
			}
		}
	}
	r.unmap()
	return r.rr.Close()
}
