package sstables

import (
	"errors"
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/recordio"
)

// IndexEntry is one entry of a table's index: the handle of a data block
// and its separator, a key at or after the block's last key and before
// the next block's first.
type IndexEntry struct {
	Separator []byte
	Block     BlockHandle
}

// Index returns the table's index, one entry per data block, in order. It
// is for tools: reads use the index in place.
func (r *Reader) Index() ([]IndexEntry, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if err := r.indexReady(); err != nil {
		return nil, err
	}
	it := r.index
	var out []IndexEntry
	for ok := it.first(); ok; ok = it.nextEntry() {
		h, err := decodeHandle(it.value, r.dataEnd)
		if err != nil {
			return out, r.indexError(err)
		}
		out = append(out, IndexEntry{Separator: append([]byte(nil), it.key...), Block: h})
	}
	if it.err != nil {
		return out, r.indexError(it.err)
	}
	return out, nil
}

// VerifyStats counts what Verify read.
type VerifyStats struct {
	// Blocks counts the data blocks read, Bytes their bytes on disk.
	Blocks, Bytes uint64
	// Entries counts the entries decoded, Tombstones the deletions among
	// them.
	Entries, Tombstones uint64
	// Damaged counts the damage reported.
	Damaged int
}

// Verify reads every data block the index names, past the block cache,
// and checks what Open does not: each block's checksum (recordio checks
// it on the read) and layout, every entry's kind, that entries ascend
// within and across blocks (a key's versions newest first), that no block
// ends past its separator, and that the counts agree with the properties.
// (Open already checked the footer, properties and range deletions, and
// the index and filter, unless ReaderOptions.LoadOnRead left them to
// Verify.) It calls report with each damage, a *CorruptionError
// naming the file and offset (report may be nil: VerifyStats.Damaged
// counts them), and goes on with the next block, so that one damaged block
// hides nothing else; it returns what it read.
func (r *Reader) Verify(report func(error)) (VerifyStats, error) {
	var st VerifyStats
	if r.closed.Load() {
		return st, ErrClosed
	}
	if err := r.blocks(); err != nil {
		return st, err
	}
	damage := func(err error) {
		st.Damaged++
		if report != nil {
			report(err)
		}
	}
	var (
		index   = r.index
		data    blockIter
		scratch []byte
		prevKey []byte
		prevSeq uint64
		started bool
		refs    []BlobRef
	)
	for ok := index.first(); ok; ok = index.nextEntry() {
		h, err := decodeHandle(index.value, r.dataEnd)
		if err != nil {
			damage(r.indexError(err))
			continue
		}
		st.Blocks++
		st.Bytes += h.Length
		block, inPlace, err := r.readBlock(h, scratch[:0])
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				return st, err
			}
			damage(err)
			started = false // the next block's first key has nothing to follow
			continue
		}
		if !inPlace {
			scratch = block[:0]
		}
		if err := data.init(r.cmp, block, false); err != nil {
			damage(r.blockError(h, err))
			started = false
			continue
		}
		for ok := data.first(); ok; ok = data.nextEntry() {
			st.Entries++
			switch data.kind() {
			case KindSet, KindMerge:
			case KindDelete:
				st.Tombstones++
			case kindSetBlob:
				if r.meta.FormatVersion < formatVersionBlobs {
					damage(r.blockError(h, errBlock(fmt.Sprintf("entry at %d of unknown kind %d", data.offset, data.kind()))))
				} else if bh, err := DecodeBlobHandle(data.value); err != nil {
					damage(r.blockError(h, errBlock(fmt.Sprintf("entry at %d: %v", data.offset, err))))
				} else {
					refs = addBlobRef(refs, bh)
				}
			default:
				damage(r.blockError(h, errBlock(fmt.Sprintf("entry at %d of unknown kind %d", data.offset, data.kind()))))
			}
			if started && compareInternal(r.cmp, prevKey, prevSeq, data.key, data.seq()) >= 0 {
				damage(r.blockError(h, errBlock(fmt.Sprintf("entry at %d (key %q, seq %d) does not sort after the one before it (key %q, seq %d)", data.offset, data.key, data.seq(), prevKey, prevSeq))))
			}
			prevKey, prevSeq, started = append(prevKey[:0], data.key...), data.seq(), true
		}
		if data.err != nil {
			damage(r.blockError(h, data.err))
			started = false
			continue
		}
		if started && compareInternal(r.cmp, prevKey, prevSeq, index.key, index.seq()) > 0 {
			damage(r.blockError(h, errBlock(fmt.Sprintf("the block's last key %q (seq %d) sorts after its index separator %q", prevKey, prevSeq, index.key))))
		}
	}
	if index.err != nil {
		damage(r.indexError(index.err))
	}
	if st.Damaged == 0 {
		m := r.meta
		if st.Blocks != m.DataBlocks || st.Entries != m.Records || st.Tombstones != m.Tombstones {
			damage(base.Corruptf(r.name, 0, ErrBadProperties, "the properties count %d blocks, %d entries, %d tombstones; the blocks hold %d, %d, %d",
				m.DataBlocks, m.Records, m.Tombstones, st.Blocks, st.Entries, st.Tombstones))
		}
		if !slices.Equal(refs, m.BlobRefs) {
			damage(base.Corruptf(r.name, 0, ErrBadProperties, "the properties count blob references %v; the blocks hold %v", m.BlobRefs, refs))
		}
	}
	return st, nil
}

// VerifyFile opens the table at path and verifies it (see Verify). A table
// that does not open is damaged too: its Open error is reported, then
// every other damaged record of the file, which a scan of its records
// finds past that one. The error is for what is not damage: a missing
// file, a comparator mismatch, an I/O error.
func VerifyFile(path string, opts *ReaderOptions, report func(error)) (VerifyStats, error) {
	if report == nil {
		report = func(error) {}
	}
	o := opts.withDefaults()
	o.Cache, o.CacheID = nil, 0
	r, err := Open(path, &o)
	if err == nil {
		defer r.Close()
		return r.Verify(report)
	}
	if !errors.Is(err, ErrCorruption) {
		return VerifyStats{}, err
	}
	report(err)
	st := VerifyStats{Damaged: 1}
	var first *base.CorruptionError
	errors.As(err, &first)
	rr, err := recordio.Open(path, &recordio.ReaderOptions{FS: o.FS, NoMmap: true, ZeroCopy: true})
	if err != nil {
		return st, nil // the file header: that was the Open error
	}
	defer rr.Close()
	err = rr.Scan(true, nil, func(err error) {
		var ce *base.CorruptionError
		if !errors.As(err, &ce) || first == nil || ce.Offset != first.Offset {
			st.Damaged++
			report(err)
		}
	})
	return st, err
}
