package sstables

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/internal/base"
)

// A block is a run of entries sorted by (key, newest first), with keys
// prefix-compressed against the entry before them, and every
// restartInterval-th key stored whole so that a search can binary-search
// those restart points and decode forward from one:
//
//	entry:   shared uvarint | unshared uvarint | value length uvarint |
//	         trailer uvarint | key[shared:] | value
//	block:   entry... | restart offset uint32 LE... | restart count uint32 LE
//
// The trailer is seq<<8 | kind in data blocks. In index blocks it is 0 for
// a separator that sorts before every entry of its key (as if its sequence
// number were MaxSeq), else the sequence number plus one: shortened
// separators, the common case, then cost one byte. Data and index blocks
// share this layout and code.

// blockBuilder accumulates one block.
type blockBuilder struct {
	buf             []byte
	restarts        []uint32
	restartInterval int
	sinceRestart    int
	lastKey         []byte
}

func (b *blockBuilder) add(key []byte, trailer uint64, value []byte) {
	shared := 0
	if b.sinceRestart < b.restartInterval {
		n := min(len(key), len(b.lastKey))
		for shared < n && key[shared] == b.lastKey[shared] {
			shared++
		}
	} else {
		b.sinceRestart = 0
	}
	if b.sinceRestart == 0 {
		b.restarts = append(b.restarts, uint32(len(b.buf)))
		shared = 0
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(key)-shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(value)))
	b.buf = binary.AppendUvarint(b.buf, trailer)
	b.buf = append(b.buf, key[shared:]...)
	b.buf = append(b.buf, value...)
	b.lastKey = append(b.lastKey[:0], key...)
	b.sinceRestart++
}

// size estimates the finished block's length.
func (b *blockBuilder) size() int { return len(b.buf) + 4*len(b.restarts) + 4 }

// empty reports whether the block has no entries: the first one adds a
// restart point.
func (b *blockBuilder) empty() bool { return len(b.restarts) == 0 }

// finish appends the restart array and returns the block; it stays valid
// until reset.
func (b *blockBuilder) finish() []byte {
	if len(b.restarts) == 0 {
		b.restarts = append(b.restarts, 0)
	}
	for _, r := range b.restarts {
		b.buf = binary.LittleEndian.AppendUint32(b.buf, r)
	}
	return binary.LittleEndian.AppendUint32(b.buf, uint32(len(b.restarts)))
}

func (b *blockBuilder) reset() {
	b.buf = b.buf[:0]
	b.restarts = b.restarts[:0]
	b.sinceRestart = 0
	b.lastKey = b.lastKey[:0]
}

// errBlock describes a malformed block; the caller adds file and offset.
type errBlock string

func (e errBlock) Error() string { return string(e) }

// blockIter walks one decoded block, either way. Every length read from
// the block is checked before use, so damaged bytes give an error, never a
// panic or an out-of-range read. key and value alias the iterator's key
// buffer and the block; they change on every move and are stale once valid
// is false (the table iterator's accessors check its own valid flag).
//
// Keys are prefix-compressed forward, so an entry decodes only from the
// restart point before it. A backward move therefore decodes the whole
// restart interval that holds the entry before the current one, and keeps
// its entries in cache, so that a backward walk decodes each entry once, as
// a forward one does (Pebble's blockIter does the same).
type blockIter struct {
	cmp       func(a, b []byte) int
	index     bool   // an index block: trailers are index sequence codes
	entries   []byte // the entries, without the restart array
	restarts  []byte // restart offsets, 4 bytes each
	nrestarts int
	hints     restartHints // a held index block's or a cached data block's, else empty

	offset  int // offset of the current entry
	next    int // offset of the entry after the current one
	key     []byte
	trailer uint64
	value   []byte
	valid   bool
	err     error

	// cache holds the entries of the restart interval a backward move
	// decoded last, in order, their keys whole in cacheKeys; cachePos is
	// the current entry's index in it, if the entry came from there.
	cache     []cachedEntry
	cacheKeys []byte
	cachePos  int
}

// cachedEntry is a decoded entry: its key is cacheKeys[keyStart:keyEnd].
type cachedEntry struct {
	offset, next     int
	keyStart, keyEnd int
	trailer          uint64
	value            []byte
}

// init points the iterator at a block's bytes and checks the restart array.
func (it *blockIter) init(cmp func(a, b []byte) int, block []byte, index bool) error {
	it.reset(cmp, index)
	if len(block) < 4 {
		return errBlock(fmt.Sprintf("block of %d bytes", len(block)))
	}
	n := binary.LittleEndian.Uint32(block[len(block)-4:])
	if n == 0 || uint64(n) > uint64(len(block)-4)/4 {
		return errBlock(fmt.Sprintf("%d restart points in a %d-byte block", n, len(block)))
	}
	it.nrestarts = int(n)
	it.entries = block[:len(block)-4-4*int(n)]
	it.restarts = block[len(it.entries) : len(block)-4]
	return nil
}

// over points the iterator at the block src is over, checked already,
// unpositioned, keeping its own buffers.
func (it *blockIter) over(src *blockIter) {
	it.reset(src.cmp, src.index)
	it.entries, it.restarts, it.nrestarts, it.hints = src.entries, src.restarts, src.nrestarts, src.hints
}

// reset empties the iterator, keeping its buffers.
func (it *blockIter) reset(cmp func(a, b []byte) int, index bool) {
	*it = blockIter{cmp: cmp, index: index, key: it.key[:0], cache: it.cache[:0], cacheKeys: it.cacheKeys[:0]}
}

func (it *blockIter) restartOffset(i int) (int, bool) {
	off := int(binary.LittleEndian.Uint32(it.restarts[4*i:]))
	return off, off <= len(it.entries)
}

// decodeAt decodes the entry at off, whose key shares a prefix with
// it.key. It returns false, setting it.err, if the entry is damaged.
func (it *blockIter) decodeAt(off int) bool {
	p := it.entries[off:]
	var fields [4]uint64
	i := 0
	// Lengths under 128, the common case, are one byte each: read them
	// without a loop per field.
	if len(p) >= 3 && p[0]|p[1]|p[2] < 0x80 {
		fields[0], fields[1], fields[2] = uint64(p[0]), uint64(p[1]), uint64(p[2])
		p, i = p[3:], 3
	}
	for ; i < len(fields); i++ {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return it.fail("entry at %d: bad varint", off)
		}
		fields[i] = v
		p = p[n:]
	}
	shared, unshared, vlen := fields[0], fields[1], fields[2]
	if shared > uint64(len(it.key)) || unshared > uint64(len(p)) || vlen > uint64(len(p))-unshared {
		return it.fail("entry at %d: lengths %d+%d+%d overrun the block", off, shared, unshared, vlen)
	}
	it.key = append(it.key[:shared], p[:unshared]...)
	it.trailer = fields[3]
	it.value = p[unshared : unshared+vlen : unshared+vlen]
	it.offset = off
	it.next = len(it.entries) - len(p) + int(unshared+vlen)
	it.valid = true
	return true
}

func (it *blockIter) fail(format string, args ...any) bool {
	it.valid = false
	if it.err == nil {
		it.err = errBlock(fmt.Sprintf(format, args...))
	}
	return false
}

// seekRestart positions the iterator at restart point i.
func (it *blockIter) seekRestart(i int) bool {
	off, ok := it.restartOffset(i)
	if !ok {
		return it.fail("restart point %d beyond the entries", i)
	}
	if off == len(it.entries) {
		it.valid = false
		return false
	}
	it.key = it.key[:0]
	return it.decodeAt(off)
}

func (it *blockIter) first() bool {
	it.err = nil
	return it.seekRestart(0)
}

func (it *blockIter) nextEntry() bool {
	if !it.valid {
		return false
	}
	if it.next >= len(it.entries) {
		it.valid = false
		return false
	}
	return it.decodeAt(it.next)
}

// last moves to the last entry.
func (it *blockIter) last() bool {
	it.err = nil
	return it.decodeInterval(it.nrestarts-1, len(it.entries))
}

// prevEntry moves to the entry before the current one: from the cache when
// it holds it, else by decoding the restart interval that does.
func (it *blockIter) prevEntry() bool {
	if !it.valid {
		return false
	}
	cur := it.offset
	if i := it.cachePos; i > 0 && i < len(it.cache) && it.cache[i].offset == cur {
		e := &it.cache[i-1]
		it.key = append(it.key[:0], it.cacheKeys[e.keyStart:e.keyEnd]...)
		it.trailer, it.value, it.offset, it.next = e.trailer, e.value, e.offset, e.next
		it.cachePos = i - 1
		return true
	}
	// The last restart point before the current entry.
	lo, hi := 0, it.nrestarts
	for lo < hi {
		mid := (lo + hi) / 2
		off, ok := it.restartOffset(mid)
		if !ok {
			return it.fail("restart point %d beyond the entries", mid)
		}
		if off < cur {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		it.valid = false
		return false
	}
	return it.decodeInterval(lo-1, cur)
}

// decodeInterval decodes the entries from restart point r up to offset end,
// where an entry (or the block's end) must start, into the cache, and moves
// to the last of them.
func (it *blockIter) decodeInterval(r, end int) bool {
	it.cache, it.cacheKeys = it.cache[:0], it.cacheKeys[:0]
	for ok := it.seekRestart(r); ok; ok = it.decodeAt(it.next) {
		it.cache = append(it.cache, cachedEntry{
			offset: it.offset, next: it.next,
			keyStart: len(it.cacheKeys), keyEnd: len(it.cacheKeys) + len(it.key),
			trailer: it.trailer, value: it.value,
		})
		it.cacheKeys = append(it.cacheKeys, it.key...)
		if it.next >= end {
			if it.next != end {
				return it.fail("entry at %d overruns the entry at %d", it.offset, end)
			}
			it.cachePos = len(it.cache) - 1
			return true
		}
	}
	return false
}

// seekLT positions the iterator at the last entry before (key, seq).
func (it *blockIter) seekLT(key []byte, seq uint64) bool {
	if it.seekGE(key, seq) {
		return it.prevEntry()
	}
	return it.err == nil && it.last()
}

// seq returns the current entry's sequence number.
func (it *blockIter) seq() uint64 { return it.trailerSeq(it.trailer) }

// trailerSeq decodes the sequence number of an entry's trailer.
func (it *blockIter) trailerSeq(trailer uint64) uint64 {
	if !it.index {
		return base.TrailerSeq(trailer)
	}
	if trailer == 0 {
		return base.MaxSeq
	}
	return trailer - 1
}

// kind returns the current data entry's kind.
func (it *blockIter) kind() Kind { return base.TrailerKind(it.trailer) }

// indexTrailer encodes a separator's sequence number for an index block.
func indexTrailer(seq uint64) uint64 {
	if seq == base.MaxSeq {
		return 0
	}
	return seq + 1
}

// before reports whether the current entry sorts before (key, seq).
func (it *blockIter) before(key []byte, seq uint64) bool {
	return compareInternal(it.cmp, it.key, it.seq(), key, seq) < 0
}

// seekGE positions the iterator at the first entry at or after (key, seq):
// it binary-searches the restart points for the last one before the target,
// comparing their keys where they lie in the block, then decodes forward.
func (it *blockIter) seekGE(key []byte, seq uint64) bool {
	it.err = nil
	if it.hints.offs != nil {
		return it.seekEntryHinted(key, seq)
	}
	lo, hi := 0, it.nrestarts-1
	if it.hints.keys != nil {
		lo, hi = it.hintedRange(key)
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		rkey, rseq, ok := it.restartKey(mid)
		if !ok {
			if it.err != nil {
				return false
			}
			hi = mid - 1
			continue
		}
		if compareInternal(it.cmp, rkey, rseq, key, seq) < 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if !it.seekRestart(lo) {
		return false
	}
	for it.before(key, seq) {
		if !it.nextEntry() {
			return false
		}
	}
	return true
}

// restartKey returns the key and sequence number of the entry at restart
// point i without decoding it into the iterator: a restart entry's key is
// whole, so a search compares it where it lies. ok is false at the end of
// the entries, and with it.err set if the entry is damaged.
func (it *blockIter) restartKey(i int) (key []byte, seq uint64, ok bool) {
	off, ok := it.restartOffset(i)
	if !ok {
		return nil, 0, it.fail("restart point %d beyond the entries", i)
	}
	if off == len(it.entries) {
		return nil, 0, false
	}
	p := it.entries[off:]
	var fields [4]uint64
	for f := range fields {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return nil, 0, it.fail("entry at %d: bad varint", off)
		}
		fields[f], p = v, p[n:]
	}
	if fields[0] != 0 || fields[1] > uint64(len(p)) {
		return nil, 0, it.fail("restart entry at %d: lengths %d+%d overrun the block", off, fields[0], fields[1])
	}
	return p[:fields[1]], it.trailerSeq(fields[3]), true
}
