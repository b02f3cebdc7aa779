package kv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"slices"

	"github.com/stratadb/strata/internal/errs"

	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/simpledb"
)

// The snapshot stream, format 1:
//
//	header   "strata-raftkv-snap" | format byte (1) | applied index, uint64 BE
//	records  key length uvarint (> 0) | key | value length uvarint | value     (key order)
//	trailer  0x00 | record count, uint64 BE | CRC-32C of every byte before it, uint32 BE
//
// The zero key length ends the records: keys are never empty. A stream cut
// short, or whose count or checksum does not match, is ErrBadSnapshot;
// raft's FileSnapshotStore checks its own CRC-64 of the file too.
const (
	snapshotMagic  = "strata-raftkv-snap"
	snapshotFormat = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type fsmSnapshot struct {
	snap    *simpledb.Snapshot
	applied uint64
}

// Persist streams the snapshot's keys into sink, and closes it (or cancels
// it on error).
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.persist(sink); err != nil {
		sink.Cancel()
		return errs.Errorf("kv: persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) persist(w io.Writer) error {
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 256<<10)
	bw.WriteString(snapshotMagic)
	bw.WriteByte(snapshotFormat)
	bw.Write(binary.BigEndian.AppendUint64(nil, s.applied))
	it, err := s.snap.NewIterator(dataLower, dataUpper)
	if err != nil {
		return err
	}
	defer it.Close()
	var n uint64
	var lenBuf [binary.MaxVarintLen64]byte
	for k, v := range it.All() {
		k = k[1:]
		bw.Write(binary.AppendUvarint(lenBuf[:0], uint64(len(k))))
		bw.Write(k)
		bw.Write(binary.AppendUvarint(lenBuf[:0], uint64(len(v))))
		if _, err := bw.Write(v); err != nil {
			return err
		}
		n++
	}
	if err := it.Err(); err != nil {
		return err
	}
	bw.WriteByte(0)
	bw.Write(binary.BigEndian.AppendUint64(nil, n))
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err = w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// Release releases the Strata snapshot.
func (s *fsmSnapshot) Release() { s.snap.Release() }

// snapshotReader reads a snapshot stream's records.
type snapshotReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	n   uint64
	buf []byte
}

// newSnapshotReader reads the header and returns the applied index.
func newSnapshotReader(r io.Reader) (*snapshotReader, uint64, error) {
	sr := &snapshotReader{r: bufio.NewReaderSize(r, 256<<10), crc: crc32.New(castagnoli)}
	hdr := make([]byte, len(snapshotMagic)+1+8)
	if err := sr.read(hdr); err != nil {
		return nil, 0, err
	}
	if string(hdr[:len(snapshotMagic)]) != snapshotMagic {
		return nil, 0, errs.Errorf("not a kv snapshot: %w", ErrBadSnapshot)
	}
	if f := hdr[len(snapshotMagic)]; f != snapshotFormat {
		return nil, 0, errs.Errorf("unknown snapshot format %d: %w", f, ErrBadSnapshot)
	}
	return sr, binary.BigEndian.Uint64(hdr[len(snapshotMagic)+1:]), nil
}

func (sr *snapshotReader) read(p []byte) error {
	if _, err := io.ReadFull(sr.r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errs.Errorf("cut short: %w", ErrBadSnapshot)
		}
		return err
	}
	sr.crc.Write(p)
	return nil
}

func (sr *snapshotReader) uvarint() (uint64, error) {
	var b [binary.MaxVarintLen64]byte
	for i := range b {
		if err := sr.read(b[i : i+1]); err != nil {
			return 0, err
		}
		if b[i] < 0x80 {
			v, w := binary.Uvarint(b[:i+1])
			if w <= 0 {
				break
			}
			return v, nil
		}
	}
	return 0, errs.Errorf("bad length: %w", ErrBadSnapshot)
}

// next returns the next record, valid until the next call, or ok false
// after checking the trailer.
func (sr *snapshotReader) next() (key, value []byte, ok bool, err error) {
	kn, err := sr.uvarint()
	if err != nil {
		return nil, nil, false, err
	}
	if kn == 0 {
		return nil, nil, false, sr.trailer()
	}
	if kn > simpledb.MaxKeySize {
		return nil, nil, false, errs.Errorf("key of %d bytes: %w", kn, ErrBadSnapshot)
	}
	key, err = sr.bytes(0, kn)
	if err != nil {
		return nil, nil, false, err
	}
	vn, err := sr.uvarint()
	if err != nil {
		return nil, nil, false, err
	}
	if vn > simpledb.MaxValueSize {
		return nil, nil, false, errs.Errorf("value of %d bytes: %w", vn, ErrBadSnapshot)
	}
	buf, err := sr.bytes(int(kn), vn)
	if err != nil {
		return nil, nil, false, err
	}
	sr.n++
	return buf[:kn], buf[kn:], true, nil
}

// bytes reads n more bytes into sr.buf after its first off, and returns
// sr.buf[:off+n]. It grows the buffer a chunk at a time as the bytes
// arrive, so that a damaged length costs no more memory than the stream
// holds.
func (sr *snapshotReader) bytes(off int, n uint64) ([]byte, error) {
	const chunk = 1 << 20
	sr.buf = sr.buf[:off]
	for n > 0 {
		k := int(min(n, chunk))
		start := len(sr.buf)
		sr.buf = slices.Grow(sr.buf, k)[:start+k]
		if err := sr.read(sr.buf[start:]); err != nil {
			return nil, err
		}
		n -= uint64(k)
	}
	return sr.buf, nil
}

func (sr *snapshotReader) trailer() error {
	var cnt [8]byte
	if err := sr.read(cnt[:]); err != nil {
		return err
	}
	want := sr.crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(sr.r, sum[:]); err != nil {
		return errs.Errorf("cut short: %w", ErrBadSnapshot)
	}
	if got := binary.BigEndian.Uint64(cnt[:]); got != sr.n {
		return errs.Errorf("%d records, trailer says %d: %w", sr.n, got, ErrBadSnapshot)
	}
	if got := binary.BigEndian.Uint32(sum[:]); got != want {
		return errs.Errorf("checksum %08x, want %08x: %w", got, want, ErrBadSnapshot)
	}
	return nil
}
