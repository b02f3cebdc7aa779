package sstables

import (
	"bytes"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/bloom"
	"github.com/stratadb/strata/internal/rangedel"
)

// Kind says whether an entry is a value, a tombstone or a merge operand.
type Kind = base.Kind

const (
	// KindSet marks a value (possibly empty).
	KindSet = base.KindSet
	// KindDelete marks a tombstone.
	KindDelete = base.KindDelete
	// KindMerge marks a merge operand, which a table stores as it stores a
	// value: folding it is the reader's business (see
	// MergeOptions.Fold).
	KindMerge = base.KindMerge
)

// MaxSeq is the largest sequence number an entry may carry.
const MaxSeq = base.MaxSeq

// Writer streams entries, in order, into a new table. It is not safe for
// concurrent use.
//
// The table is written under a temporary name (the final name plus
// ".tmp") and appears under its final name only once complete and durable:
// Close syncs the file, renames it and syncs the directory. A crash before
// that leaves at most the temporary file, never a partial table.
type Writer struct {
	durableFile
	opts WriterOptions
	cmp  func(a, b []byte) int

	data   blockBuilder
	index  blockBuilder
	filter *bloom.Builder
	meta   Metadata

	lastKey []byte // empty until the first entry: keys are never empty
	lastSeq uint64

	rangeDels []RangeTombstone // in the order added; fragmented by finish

	// The index entry of the last finished block waits for the next key, so
	// that its separator can be shortened to fall between the two blocks.
	pending    bool
	pendingKey []byte
	pendingSeq uint64
	pendingH   BlockHandle
	sep        []byte

	handle    []byte      // a blob handle's encoding, reused
	blobs     *BlobWriter // created by WriterOptions.Blobs for the first large value
	blobBytes uint64      // the stored bytes of the values the table keeps in blob files
}

// NewWriter creates a table to be named name once Close succeeds.
func NewWriter(name string, opts *WriterOptions) (*Writer, error) {
	o := opts.withDefaults()
	codec, err := o.Compression.Codec()
	if err != nil {
		return nil, errs.Errorf("sstables: %w", err)
	}
	w := &Writer{
		opts:  o,
		cmp:   o.Comparator.Compare,
		data:  blockBuilder{restartInterval: o.RestartInterval},
		index: blockBuilder{restartInterval: o.RestartInterval},
		meta: Metadata{
			FormatVersion:   formatVersion,
			Comparator:      o.Comparator.Name,
			Codec:           codec,
			BlockSize:       uint64(o.BlockSize),
			RestartInterval: uint64(o.RestartInterval),
			BloomBitsPerKey: uint64(o.BloomBitsPerKey),
			ID:              o.ID,
		},
	}
	if o.BloomBitsPerKey > 0 {
		w.filter = bloom.NewBuilder(o.BloomBitsPerKey)
	}
	if w.durableFile, err = createDurable(name, &o); err != nil {
		return nil, err
	}
	return w, nil
}

// Add adds a value for key, with sequence number 0. Keys must come in
// strictly increasing order.
func (w *Writer) Add(key, value []byte) error {
	return w.AddEntry(key, 0, KindSet, value)
}

// Delete adds a tombstone for key, with sequence number 0.
func (w *Writer) Delete(key []byte) error {
	return w.AddEntry(key, 0, KindDelete, nil)
}

// AddEntry adds a version of key. Entries must come in increasing key
// order, and versions of one key from the newest (highest seq) down; a
// repeated (key, seq) is out of order too. With WriterOptions.Blobs, a
// value (KindSet) of at least BlobThreshold bytes goes to the blob file,
// and the table keeps its handle.
func (w *Writer) AddEntry(key []byte, seq uint64, kind Kind, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if err := base.CheckKind(kind); err != nil {
		return err
	}
	newKey, err := w.check(key, seq)
	if err != nil {
		return err
	}
	if kind == KindSet && w.opts.Blobs != nil && len(value) >= w.opts.BlobThreshold {
		if w.blobs == nil {
			bw, err := w.opts.Blobs()
			if err != nil {
				return w.fail(err)
			}
			w.blobs = bw
		}
		h, err := w.blobs.Add(value)
		if err != nil {
			return w.fail(err)
		}
		return w.addBlobRef(key, seq, h, newKey)
	}
	return w.add(key, seq, kind, value, newKey)
}

// AddBlobRef adds a value of key (KindSet) that lies in a blob file at h,
// as AddEntry does: the table keeps the handle, as a compaction that moves
// an entry from one table to another keeps it. The caller keeps the blob
// file while the table names it.
func (w *Writer) AddBlobRef(key []byte, seq uint64, h BlobHandle) error {
	newKey, err := w.check(key, seq)
	if err != nil {
		return err
	}
	return w.addBlobRef(key, seq, h, newKey)
}

func (w *Writer) addBlobRef(key []byte, seq uint64, h BlobHandle, newKey bool) error {
	w.handle = AppendBlobHandle(w.handle[:0], h)
	w.meta.BlobRefs = addBlobRef(w.meta.BlobRefs, h)
	w.blobBytes += h.Length
	return w.add(key, seq, kindSetBlob, w.handle, newKey)
}

// check refuses a key or sequence number no table takes, and a key out of
// order, and reports whether key is another than the last.
func (w *Writer) check(key []byte, seq uint64) (newKey bool, err error) {
	if w.err != nil {
		return false, w.err
	}
	if err := base.CheckKey(key); err != nil {
		return false, err
	}
	if seq > MaxSeq {
		return false, errs.Errorf("%w: %d", ErrBadSeq, seq)
	}
	if len(w.lastKey) > 0 {
		// compareInternal inlined, to compare the keys once.
		c := w.cmp(key, w.lastKey)
		if c < 0 || c == 0 && seq >= w.lastSeq {
			return false, errs.Errorf("%w: %q@%d after %q@%d", ErrOutOfOrder, truncate(key), seq, truncate(w.lastKey), w.lastSeq)
		}
		return c != 0, nil
	}
	return true, nil
}

// add adds an entry check has accepted.
func (w *Writer) add(key []byte, seq uint64, kind Kind, value []byte, newKey bool) error {
	if w.pending {
		w.addIndexEntry(key)
	}
	if w.filter != nil && newKey {
		w.filter.Add(key)
	}
	w.data.add(key, base.MakeTrailer(seq, kind), value)
	w.noteEntry(key, seq, kind, value)
	if w.data.size() >= w.opts.BlockSize {
		return w.flushBlock()
	}
	return nil
}

// AddRangeDel adds a range tombstone: the deletion, as of seq, of the
// versions below seq of every key in [start, end), where an empty start or
// end leaves that side unbounded. Range tombstones may come in any order,
// overlap each other, and extend beyond the table's entries; the table
// stores them fragmented in its range-deletion block. The writer copies
// start and end. A start not before end is ErrBadRangeDel.
func (w *Writer) AddRangeDel(start, end []byte, seq uint64) error {
	if w.err != nil {
		return w.err
	}
	t := RangeTombstone{Start: bytes.Clone(start), End: bytes.Clone(end), Seq: seq}
	if err := rangedel.Check(w.cmp, t); err != nil {
		return err
	}
	w.rangeDels = append(w.rangeDels, t)
	return nil
}

// noteEntry records an added entry in the metadata; MaxKey waits for
// finish, to save a copy per entry.
func (w *Writer) noteEntry(key []byte, seq uint64, kind Kind, value []byte) {
	m := &w.meta
	if len(w.lastKey) == 0 {
		m.MinKey = append(m.MinKey[:0], key...)
		m.MinSeq, m.MaxSeq = seq, seq
	}
	m.MinSeq, m.MaxSeq = min(m.MinSeq, seq), max(m.MaxSeq, seq)
	m.Records++
	if kind == KindDelete {
		m.Tombstones++
	}
	m.RawKeySize += uint64(len(key))
	m.RawValueSize += uint64(len(value))
	w.lastKey = append(w.lastKey[:0], key...)
	w.lastSeq = seq
}

// addIndexEntry indexes the last finished block now that the next key is
// known: with a separator between the two blocks when the comparator can
// shorten one, else with the block's last key. A separator that is not
// strictly between them (a faulty custom Separator) is not used: one at or
// after next would send a read of next to this block.
func (w *Writer) addIndexEntry(next []byte) {
	key, trailer := w.pendingKey, indexTrailer(w.pendingSeq)
	if next != nil && w.opts.Comparator.Separator != nil && w.cmp(w.pendingKey, next) < 0 {
		w.sep = w.opts.Comparator.Separator(w.sep[:0], w.pendingKey, next)
		if w.cmp(w.sep, w.pendingKey) > 0 && w.cmp(w.sep, next) < 0 {
			// It sorts after every version of the block's last key, and
			// before the next key whatever its version.
			key, trailer = w.sep, indexTrailer(MaxSeq)
		}
	}
	w.index.add(key, trailer, w.pendingH.append(nil))
	w.pending = false
}

func (w *Writer) flushBlock() error {
	h, err := w.writeBlock(w.data.finish())
	if err != nil {
		return w.fail(err)
	}
	w.pendingH = h
	w.pendingKey = append(w.pendingKey[:0], w.lastKey...)
	w.pendingSeq = w.lastSeq
	w.pending = true
	w.meta.DataBlocks++
	w.meta.DataSize += w.pendingH.Length
	w.data.reset()
	return nil
}

// writeBlock appends a block, as one record, and returns its handle.
func (w *Writer) writeBlock(block []byte) (BlockHandle, error) {
	off, err := w.rw.Write(block)
	if err != nil {
		return BlockHandle{}, err
	}
	return BlockHandle{Offset: uint64(off), Length: uint64(w.rw.Size() - off)}, nil
}

// EstimatedSize returns the table's size so far, the block being built
// included. Compaction uses it to split its output.
func (w *Writer) EstimatedSize() int64 {
	return w.rw.Size() + int64(w.data.size())
}

// Close finishes the table: it writes the last block, the filter, the index,
// the properties and the footer, syncs the file, renames it to its final
// name and syncs the directory. On failure the temporary file is removed.
func (w *Writer) Close() error { return w.close(w.finish) }

func (w *Writer) finish() error {
	if !w.data.empty() {
		if err := w.flushBlock(); err != nil {
			return err
		}
	}
	if w.pending {
		w.addIndexEntry(nil)
	}
	f := footer{version: formatVersion}
	var err error
	if w.filter != nil {
		if f.filter, err = w.writeBlock(w.filter.Build()); err != nil {
			return err
		}
		w.meta.FilterSize = f.filter.Length
	}
	if f.index, err = w.writeBlock(w.index.finish()); err != nil {
		return err
	}
	w.meta.IndexSize = f.index.Length
	if len(w.rangeDels) > 0 {
		frags := rangedel.Build(w.cmp, w.rangeDels)
		h, err := w.writeBlock(frags.Encode(nil))
		if err != nil {
			return err
		}
		w.meta.rangeDelOffset, w.meta.RangeDelSize = h.Offset, h.Length
		w.meta.RangeDeletions = uint64(len(frags))
		// MinSeq and MaxSeq bound the range tombstones' too.
		if w.meta.Records == 0 {
			w.meta.MinSeq, w.meta.MaxSeq = w.rangeDels[0].Seq, w.rangeDels[0].Seq
		}
		for _, t := range w.rangeDels {
			w.meta.MinSeq, w.meta.MaxSeq = min(w.meta.MinSeq, t.Seq), max(w.meta.MaxSeq, t.Seq)
		}
	}
	w.meta.MaxKey = append(w.meta.MaxKey[:0], w.lastKey...)
	w.meta.CreatedUnixNano = time.Now().UnixNano()
	if f.props, err = w.writeBlock(w.meta.encode()); err != nil {
		return err
	}
	if err := w.writeLast(f.encode(), footerRecordSize, "footer"); err != nil {
		return err
	}
	w.meta.FileSize = uint64(w.rw.Size())
	return nil
}

// BlobBytes returns the bytes the values the table keeps in blob files
// take there so far, as stored (compressed): with EstimatedSize, whose
// blocks are compressed too, the data the table stands for.
func (w *Writer) BlobBytes() uint64 { return w.blobBytes }

// BlobWriter returns the blob file WriterOptions.Blobs created for the
// table's large values, nil if none: the caller closes it.
func (w *Writer) BlobWriter() *BlobWriter { return w.blobs }

// Metadata describes the table; it is complete (MaxKey included) once Close
// has succeeded. Its MinKey and MaxKey are the writer's own and must not be
// modified.
func (w *Writer) Metadata() Metadata { return w.meta }

// Abort discards the table: it closes and removes the temporary file.
func (w *Writer) Abort() error { return w.abort() }

// truncate shortens a key for an error message.
func truncate(key []byte) []byte {
	if len(key) > 32 {
		return key[:32]
	}
	return key
}
