package simpledb

import (
	"errors"
	"io"
	"slices"

	"github.com/stratadb/strata/internal/errs"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/logformat"
	"github.com/stratadb/strata/internal/manifest"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
)

// logWalk reads one log by recovery's rules. Replay applies the batches it
// accepts and refuses the database at the first damage it reports; Verify
// reports all of it. The rules:
//
//   - A log of format 5 on begins with its identity, which must be the
//     one the manifest recorded (and name the file's own number): another
//     database's log, or one of an earlier life of this one, is damage. A
//     log no manifest names yet whose identity is missing or another's is
//     one a crash interrupted while creating it (or while renaming a
//     recycled file for it), and reads as empty.
//   - A closed log ends at its recorded length: what lies past it (space
//     allocated ahead, a recycled file's old bytes whose cut the crash
//     undid) is not the log's. Before it, damage, a record of another log,
//     or the end of the records (zeros where records should be, a file cut
//     short) is damage.
//   - A log still being written ends at the first damage or record of
//     another log. That end is a torn tail unless a later record of the
//     log's own says the log was durable past it (each carries the synced
//     length of its moment): a power loss can leave the unsynced end with
//     pages missing or reverted in any order, but never below a length an
//     fsync confirmed. Batches after an end are not accepted.
//   - Every accepted batch decodes, and its sequence numbers follow those
//     before it.
type logWalk struct {
	fsys   vfs.FS
	path   string
	num    uint64
	info   manifest.LogInfo // what the manifest records: size 0 if none, id 0 if none
	named  bool             // the manifest names the log: its headers were durable before that
	format uint64
	// lastSeq is the last sequence number accepted so far, across logs: the
	// next batch's must be above it. The walk advances it.
	lastSeq *uint64
	// apply is called with each op of each accepted batch, in order; nil
	// only checks them.
	apply func(seq uint64, kind base.Kind, key, value []byte) error
	// live: another Open may be writing the database (a follower's
	// replay), and may recycle the log under the walk. A walk that found
	// the log's own identity confirms, once done, that the file still
	// begins with it, and fails with errLogRecycled if not: the records it
	// read after the reuse began were the newer log's, and a newer log's
	// close may have cut the file short of this one's.
	live bool
}

// logOutcome is what a walk found.
type logOutcome struct {
	batches int // accepted
	// tail is the end of the log's records when it is a torn tail; nil
	// when they end cleanly.
	tail *base.CorruptionError
	// unwritten: the log is one a crash interrupted while creating it (no
	// file header, or no identity of its own), read as empty; tail is set
	// too.
	unwritten bool
	// damage lists every damage found, each an error matching
	// ErrCorruption that names the file and offset.
	damage []error
}

// run walks the log. Its error is for what stopped it (an I/O error, an
// apply that failed), not for damage, which the outcome lists.
func (w *logWalk) run() (*logOutcome, error) {
	out := &logOutcome{}
	size := int64(w.info.Size)
	cut := false // the file is shorter than its recorded length
	if size > 0 {
		info, err := w.fsys.Stat(w.path)
		if err != nil {
			return nil, errs.Errorf("simpledb: %w", err)
		}
		if info.Size() < size {
			cut = true
			out.damage = append(out.damage, base.Corruptf(w.path, info.Size(), ErrCorruption, "the log ends here; the manifest recorded %d bytes", size))
		}
	}
	var pin vfs.File // the file, for the identity check of a live walk
	if w.live {
		// Both opens find the same file: a log's name never names another.
		f, err := w.fsys.Open(w.path)
		if err != nil {
			return nil, errs.Errorf("simpledb: %w", err)
		}
		defer f.Close()
		pin = f
	}
	ropts := &recordio.ReaderOptions{FS: w.fsys, ZeroCopy: true, NoMmap: true}
	r, err := recordio.Open(w.path, ropts)
	if err != nil {
		headerless := errors.Is(err, recordio.ErrTruncatedHeader) || headerUnwritten(w.fsys, w.path)
		switch {
		case headerless && w.named:
			out.damage = append(out.damage, base.Corruptf(w.path, 0, ErrCorruption, "the manifest names this log, yet its file header is gone: %v", err))
		case headerless && size == 0:
			out.unwritten, out.tail = true, asCorruption(w.path, err)
		case errors.Is(err, ErrCorruption):
			out.damage = append(out.damage, err)
		default:
			return nil, errs.Errorf("simpledb: %w", err)
		}
		return out, nil
	}
	defer func() { r.Close() }()

	// A log starts with its identity from format 5 on; a log this build
	// created while opening a database of an older format too, before the
	// manifest of the new format named it (it holds nothing else then).
	stamp := uint32(w.num) // what the log's own batches carry
	id, problem, first := w.identity(r)
	_, _, isIdentity := logformat.DecodeIdentity(first)
	switch {
	case problem == nil:
		stamp = uint32(id)
	case w.format < logformat.Identity && !isIdentity:
		if first != nil {
			// The first record is a batch: read the log again from it.
			r.Close()
			if r, err = recordio.Open(w.path, ropts); err != nil {
				return nil, errs.Errorf("simpledb: %w", err)
			}
		}
	case w.named:
		out.damage = append(out.damage, problem)
		return out, nil
	default:
		out.unwritten, out.tail = true, problem
		return out, nil
	}

	end := int64(recordio.FileHeaderSize) // where the records read so far end
	if problem == nil {
		end = r.Offset() + r.Info().Size
	}
	// pending holds the ends of the log's records found so far that no
	// later record has shown to lie within durable data: a torn tail, so
	// far.
	var pending []*base.CorruptionError
	for {
		rec, err := r.Next()
		if err == io.EOF {
			if size > 0 && end < size && !cut {
				out.damage = append(out.damage, base.Corruptf(w.path, end, ErrCorruption,
					"the log's records end here, within the %d bytes the manifest recorded", size))
			}
			break
		}
		if err != nil && !errors.Is(err, ErrCorruption) {
			return nil, errs.Errorf("simpledb: %w", err)
		}
		at := damageOffset(err, r.Offset()) // of the record or the damage
		if size > 0 && at >= size {
			break // past the closed log's end
		}
		var stop *base.CorruptionError // what ends the log's own records here, if anything
		if err != nil {
			errors.As(err, &stop)
		} else if got := logformat.Stamp(w.format, rec); got != stamp && w.format >= logformat.LogNum {
			stop = base.Corruptf(w.path, at, errStaleRecord, "it carries the stamp %08x, not this log's %08x", got, stamp)
		}
		if stop != nil {
			if size > 0 {
				out.damage = append(out.damage, errs.Errorf("%w (within the log's recorded %d bytes)", stop, size))
			} else {
				pending = append(pending, stop)
			}
			if err != nil {
				if _, err := r.Resync(); err == io.EOF {
					break
				} else if err != nil {
					return nil, errs.Errorf("simpledb: %w", err)
				}
			}
			continue
		}
		end = r.Offset() + r.Info().Size
		synced := logformat.Synced(w.format, rec)
		for len(pending) > 0 && pending[0].Offset < synced {
			out.damage = append(out.damage, errs.Errorf("%w: the record at offset %d says the log was durable up to %d", pending[0], r.Offset(), synced))
			pending = pending[1:]
		}
		if len(pending) > 0 {
			continue // after an end: not the log's, unless it proves the end damage
		}
		bad, err := w.accept(rec)
		if err != nil {
			return nil, err
		}
		if bad != nil {
			out.damage = append(out.damage, base.Corruptf(w.path, r.Offset(), ErrCorruption, "%v", bad))
			continue
		}
		out.batches++
	}
	if len(pending) > 0 {
		out.tail = pending[0]
	}
	if pin != nil && problem == nil && !startsWithIdentity(pin, w.num, id) {
		return nil, errs.Errorf("simpledb: %w", errLogRecycled)
	}
	return out, nil
}

// startsWithIdentity reports whether f begins with log num's identity
// record of id. A reuse of the file writes its new identity over the old
// before any record, so a walk that began with the identity and still
// finds it after reading read only the log's own bytes.
func startsWithIdentity(f vfs.File, num, id uint64) bool {
	r, err := recordio.NewReader(io.NewSectionReader(f, 0, identityReadSize), &recordio.ReaderOptions{BufferSize: identityReadSize})
	if err != nil {
		return false
	}
	rec, err := r.Next()
	gotNum, gotID, ok := logformat.DecodeIdentity(rec)
	return err == nil && ok && gotNum == num && gotID == id
}

// identityReadSize bounds the bytes read to find a log's file header and
// identity record.
const identityReadSize = 512

// identity reads the log's first record, its identity, and checks it
// against the file's number and the identity the manifest recorded. It
// returns the identity, or, if the record is missing, damaged or another
// log's, the damage that is, at the record's offset; and the first record,
// if one was read whole.
func (w *logWalk) identity(r *recordio.Reader) (uint64, *base.CorruptionError, []byte) {
	rec, err := r.Next()
	switch {
	case err == io.EOF:
		return 0, base.Corruptf(w.path, recordio.FileHeaderSize, ErrCorruption, "the log has no identity record"), nil
	case err != nil:
		var ce *base.CorruptionError
		if errors.As(err, &ce) {
			return 0, base.Corruptf(w.path, ce.Offset, ErrCorruption, "the log's identity record is damaged: %v", err), nil
		}
		return 0, base.Corruptf(w.path, recordio.FileHeaderSize, ErrCorruption, "the log's identity record cannot be read: %v", err), nil
	}
	num, id, ok := logformat.DecodeIdentity(rec)
	switch {
	case !ok:
		return 0, base.Corruptf(w.path, r.Offset(), ErrCorruption, "the log's first record is not its identity"), rec
	case num != w.num:
		return 0, base.Corruptf(w.path, r.Offset(), ErrCorruption, "the log's identity names log %d: the file is another log's", num), rec
	case w.info.ID != 0 && id != w.info.ID:
		return 0, base.Corruptf(w.path, r.Offset(), ErrCorruption,
			"the log's identity is %016x, the manifest recorded %016x: a log of another database, or of an earlier life of this one", id, w.info.ID), rec
	}
	return id, nil, rec
}

// accept decodes a batch, checks its sequence numbers and applies its ops.
// bad is the problem with a batch that is damage (whose ops before it
// were applied: replay refuses the database then); err is apply's
// failure.
func (w *logWalk) accept(rec []byte) (bad, err error) {
	last := *w.lastSeq
	_, _, bad = logformat.Decode(w.format, rec, func(seq uint64, kind base.Kind, key, value []byte) error {
		if seq <= last {
			return errs.Errorf("%w: sequence number %d after %d", logformat.ErrBadBatch, seq, last)
		}
		last = seq
		if w.apply != nil {
			if err = w.apply(seq, kind, key, value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, errs.Errorf("simpledb: replay %s: %w", w.path, err)
	}
	if bad == nil {
		*w.lastSeq = last
	}
	return bad, nil
}

// asCorruption returns err as the *CorruptionError it holds, or one at
// offset 0 of path that wraps it.
func asCorruption(path string, err error) *base.CorruptionError {
	var ce *base.CorruptionError
	if errors.As(err, &ce) {
		return ce
	}
	return base.Corruptf(path, 0, err, "")
}

// headerUnwritten reports whether a log's file header is zeros, as space
// allocated ahead reads before the header reaches it.
func headerUnwritten(fsys vfs.FS, path string) bool {
	f, err := fsys.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	hdr := make([]byte, recordio.FileHeaderSize)
	n, err := io.ReadFull(f, hdr)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false // unreadable (a directory, say): not a header a crash left unwritten
	}
	return !slices.ContainsFunc(hdr[:n], func(b byte) bool { return b != 0 })
}

// damageOffset returns the offset a corruption error names, or def.
func damageOffset(err error, def int64) int64 {
	var ce *base.CorruptionError
	if errors.As(err, &ce) {
		return ce.Offset
	}
	return def
}

// tornTails applies the rule across a database's logs, oldest first: a
// torn tail is the end of the last write, so no later log may hold
// records; if one does, acknowledged writes were lost in between.
type tornTails struct {
	torn error // the first torn tail, while no later log holds records
}

// next takes the outcome of the next log and returns the damage it
// proves, if any.
func (t *tornTails) next(num uint64, out *logOutcome) error {
	var err error
	if out.batches > 0 && t.torn != nil {
		err = errs.Errorf("%w, and log %06d after it holds records", t.torn, num)
		t.torn = nil
	}
	if t.torn == nil && out.tail != nil {
		t.torn = out.tail
	}
	return err
}
