package simpledb

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
)

// Merger gives Merge its meaning: how an operand written with Merge
// combines with the key's value, or with another operand. A database opened
// with one records its Name in the manifest, and every later Open must
// give a Merger of that name (ErrMergerMismatch otherwise).
//
// Reads fold a key's operands, oldest first, onto its newest value below
// them; onto nothing if a deletion (or range deletion) is below them or
// nothing is, when the operands alone, folded together, are the value.
// Compactions fold runs of operands before the value under them is known,
// so Merge must be associative: Merge(Merge(a, b), c) must equal
// Merge(a, Merge(b, c)), for values and operands alike.
type Merger struct {
	// Name identifies the merger in the manifest: change it whenever the
	// meaning of Merge changes.
	Name string
	// Merge combines two adjacent versions of key: older, a value or an
	// operand, and newer, an operand written after it. It must neither
	// modify nor keep its arguments, and must return new memory. Its error
	// reaches the read that needed the fold (a compaction writes the
	// versions unfolded instead), wrapping ErrMergeFailed.
	Merge func(key, older, newer []byte) ([]byte, error)
	// CheckOperand, if set, vets an operand before Merge writes it: an
	// error, which Merge and Write return wrapping ErrMergeFailed, keeps
	// the write out. Optional.
	CheckOperand func(operand []byte) error
}

// Uint64AddMerger makes Merge add to a counter: values and operands are
// unsigned 64-bit integers, 8 bytes little-endian, added with wraparound. A
// key with no value counts from 0, so Merge(key, 1) counts how often it
// ran. EncodeCounter makes operands (and values, for Put); a Get returns
// the sum, which DecodeCounter reads. An operand of another length is
// refused at Merge; a value of another length, written with Put, fails the
// reads that fold onto it.
var Uint64AddMerger = &Merger{
	Name: "strata.uint64add",
	Merge: func(_, older, newer []byte) ([]byte, error) {
		if len(older) != 8 || len(newer) != 8 {
			return nil, fmt.Errorf("a uint64 counter takes 8-byte values, not %d and %d bytes", len(older), len(newer))
		}
		return binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(older)+binary.LittleEndian.Uint64(newer)), nil
	},
	CheckOperand: func(operand []byte) error {
		if len(operand) != 8 {
			return fmt.Errorf("a uint64 counter's operand is 8 bytes, not %d", len(operand))
		}
		return nil
	},
}

// EncodeCounter returns n as Uint64AddMerger's values and operands hold it:
// 8 bytes, little-endian.
func EncodeCounter(n uint64) []byte {
	return binary.LittleEndian.AppendUint64(nil, n)
}

// DecodeCounter returns the count a Uint64AddMerger value holds, and
// ErrCounterMalformed for a value of another length than 8 bytes.
func DecodeCounter(value []byte) (uint64, error) {
	if len(value) != 8 {
		return 0, errs.Errorf("%w: %d bytes, a counter is 8", ErrCounterMalformed, len(value))
	}
	return binary.LittleEndian.Uint64(value), nil
}

// AppendMerger makes Merge append: the value becomes the older value with
// the operand's bytes after it, so that a key collects what is merged into
// it, in the order the merges committed. Framing the pieces, if they need
// it, is the caller's.
var AppendMerger = &Merger{
	Name: "strata.append",
	Merge: func(_, older, newer []byte) ([]byte, error) {
		return slices.Concat(older, newer), nil
	},
}

// fold returns the merger's Merge as the merges of the layers below take
// it, its errors wrapped in ErrMergeFailed; nil without a merger.
func (m *Merger) fold() func(key, older, newer []byte) ([]byte, error) {
	if m == nil {
		return nil
	}
	return func(key, older, newer []byte) ([]byte, error) {
		v, err := m.Merge(key, older, newer)
		if err != nil {
			return nil, errs.Errorf("%w: key %q: %w", ErrMergeFailed, key, err)
		}
		return v, nil
	}
}

// checkOperand returns ErrNoMerger without a merger, or the merger's
// refusal of operand.
func (o *Options) checkOperand(operand []byte) error {
	m := o.Merger
	if m == nil {
		return ErrNoMerger
	}
	if m.CheckOperand == nil {
		return nil
	}
	if err := m.CheckOperand(operand); err != nil {
		return errs.Errorf("%w: %w", ErrMergeFailed, err)
	}
	return nil
}

// checkMerges checks the merge operands of a batch that holds some.
func (o *Options) checkMerges(b *Batch) error {
	var err error
	if decodeErr := logformat.Ops(b.data, b.count, func(kind base.Kind, _, value []byte) {
		if kind == base.KindMerge && err == nil {
			err = o.checkOperand(value)
		}
	}); decodeErr != nil {
		return decodeErr
	}
	return err
}

// checkMerger refuses the database in dir, whose manifest records the
// merger recorded ("" for none), unless Options.Merger is that merger.
func (o *Options) checkMerger(dir, recorded string) error {
	switch m := o.Merger; {
	case recorded == "":
		return nil
	case m == nil:
		return errs.Errorf("%w: %s uses the merger %q; open it with Options.Merger set to it", ErrMergerMismatch, dir, recorded)
	case m.Name != recorded:
		return errs.Errorf("%w: %s uses the merger %q, not %q", ErrMergerMismatch, dir, recorded, m.Name)
	}
	return nil
}

// mergerName is the name the manifest records: Options.Merger's, "" for
// none.
func (o *Options) mergerName() string {
	if o.Merger == nil {
		return ""
	}
	return o.Merger.Name
}
