package sstables

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/errs"
)

// kindSetBlob is the kind of a table entry whose value lies in a blob file:
// the entry's value is the value's BlobHandle. It is the table's own
// (format 3); readers show such an entry as KindSet, and read its value
// from the blob file only when asked for it.
const kindSetBlob Kind = 4

// DefaultBlobThreshold is the value size a zero WriterOptions.BlobThreshold
// means: values of at least 512 bytes go to the blob file, the smallest
// size measured at which separating values costs reads and scans nothing
// and makes fills faster (docs/12-large-values.md, "The threshold").
const DefaultBlobThreshold = 512

// ErrNoBlobSource: a value of the table lies in a blob file, and the table
// was opened without ReaderOptions.Blobs to read it.
var ErrNoBlobSource = errors.New("sstables: a value in a blob file, and no BlobSource to read it")

// BlobSource gives a table the blob files it names: its owner's open blob
// files, found by number. A file Blob returns stays open until
// ReleaseBlob.
type BlobSource interface {
	Blob(num uint64) (*BlobReader, error)
	ReleaseBlob(*BlobReader)
}

// readBlob reads the value h locates through src (see BlobReader.Value),
// reading ahead with ra if a scan gives one.
func readBlob(src BlobSource, h BlobHandle, scratch *[]byte, fill bool, ra *blobReadahead, use func([]byte)) error {
	br, err := src.Blob(h.FileNum)
	if err != nil {
		return err
	}
	defer src.ReleaseBlob(br)
	if ra != nil {
		return br.valueAhead(h, ra, scratch, use)
	}
	return br.Value(h, scratch, fill, use)
}

// BlobRef counts a table's references into one blob file: from these, an
// owner knows how many of a blob file's bytes live tables still need.
type BlobRef struct {
	// FileNum is the blob file's number.
	FileNum uint64
	// Values counts the table's entries whose values lie in the file, and
	// ValueBytes their bytes.
	Values, ValueBytes uint64
}

// addBlobRef counts a reference to h in refs, which stays sorted by file.
func addBlobRef(refs []BlobRef, h BlobHandle) []BlobRef {
	i, found := slices.BinarySearchFunc(refs, h.FileNum, func(r BlobRef, num uint64) int {
		switch {
		case r.FileNum < num:
			return -1
		case r.FileNum > num:
			return 1
		}
		return 0
	})
	if !found {
		refs = slices.Insert(refs, i, BlobRef{FileNum: h.FileNum})
	}
	refs[i].Values++
	refs[i].ValueBytes += h.ValueLen
	return refs
}

// encodeBlobRefs encodes refs: a count, then each file's number, values
// and bytes, all uvarints.
func encodeBlobRefs(refs []BlobRef) []byte {
	b := binary.AppendUvarint(nil, uint64(len(refs)))
	for _, r := range refs {
		b = binary.AppendUvarint(b, r.FileNum)
		b = binary.AppendUvarint(b, r.Values)
		b = binary.AppendUvarint(b, r.ValueBytes)
	}
	return b
}

func decodeBlobRefs(b []byte) ([]BlobRef, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("blob references: bad count")
	}
	b = b[k:]
	refs := make([]BlobRef, n)
	for i := range refs {
		for _, field := range []*uint64{&refs[i].FileNum, &refs[i].Values, &refs[i].ValueBytes} {
			v, k := binary.Uvarint(b)
			if k <= 0 {
				return nil, fmt.Errorf("blob references: reference %d malformed", i)
			}
			*field, b = v, b[k:]
		}
		if i > 0 && refs[i].FileNum <= refs[i-1].FileNum {
			return nil, fmt.Errorf("blob references: file %d after %d", refs[i].FileNum, refs[i-1].FileNum)
		}
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("blob references: trailing bytes")
	}
	return refs, nil
}

// blobValue reads the value an entry's handle names, for the data block
// at h, through the table's BlobSource, reading ahead with ra if a scan
// gives one. The error of a reference that does not read names both
// files.
func (r *Reader) blobValue(handle []byte, h BlockHandle, scratch *[]byte, fill bool, ra *blobReadahead, use func([]byte)) error {
	bh, err := DecodeBlobHandle(handle)
	if err != nil {
		return r.blockError(h, err)
	}
	if r.blobs == nil {
		return errs.Errorf("%w: %s", ErrNoBlobSource, r.name)
	}
	if err := readBlob(r.blobs, bh, scratch, fill, ra, use); err != nil {
		return errs.Errorf("sstables: %s: the block at %d names a value in blob file %d: %w", r.name, h.Offset, bh.FileNum, err)
	}
	return nil
}
