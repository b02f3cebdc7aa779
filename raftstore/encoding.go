package raftstore

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"

	"github.com/stratadb/strata/internal/errs"

	"github.com/hashicorp/raft"
)

// Key prefixes: one byte before every key says what it is, so the log, the
// stable store and the store's own metadata share one database without
// meeting. Log keys sort by index because the index is big-endian.
const (
	prefixLog    = 'l'
	prefixStable = 's'
	prefixMeta   = 'm'
)

const (
	// logKeyLen is a log key's length: the prefix and a uint64 index.
	logKeyLen = 1 + 8
	// entryFormat is the version byte that starts every log entry written by
	// this build.
	entryFormat = 1
	// entryHeaderLen is the fixed part of an entry: format, type, flags,
	// term and appendedAt.
	entryHeaderLen = 1 + 1 + 1 + 8 + 8
	// flagAppendedAt marks an entry whose AppendedAt is set; without it the
	// 8 bytes are zero and AppendedAt is the zero time.
	flagAppendedAt = 1 << 0
	// knownFlags are the flags this build reads; any other set bit is
	// corruption (or a newer format that would have bumped entryFormat).
	knownFlags = flagAppendedAt
)

// formatKey holds the store's marker; formatMagic and storeFormat its value.
var (
	formatKey   = []byte{prefixMeta, 'f', 'o', 'r', 'm', 'a', 't'}
	formatMagic = "strata-raftstore"
)

// storeFormat is the version of the key layout, written after formatMagic.
const storeFormat = 1

// logBounds are the bounds [lower, upper) of every log key.
var (
	logLower = []byte{prefixLog}
	logUpper = []byte{prefixLog + 1}
)

// logKey writes the key of index into dst, which must hold logKeyLen bytes.
func logKey(dst []byte, index uint64) []byte {
	dst = dst[:logKeyLen]
	dst[0] = prefixLog
	binary.BigEndian.PutUint64(dst[1:], index)
	return dst
}

// logKeyIndex returns the index of a log key.
func logKeyIndex(key []byte) (uint64, error) {
	if len(key) != logKeyLen || key[0] != prefixLog {
		return 0, errs.Errorf("raftstore: log key %x: %w", key, ErrCorruptEntry)
	}
	return binary.BigEndian.Uint64(key[1:]), nil
}

// stableKey returns the key of a stable-store key.
func stableKey(key []byte) []byte {
	k := make([]byte, 1+len(key))
	k[0] = prefixStable
	copy(k[1:], key)
	return k
}

// entryLen returns the length of l's encoding (appendEntry).
func entryLen(l *raft.Log) int {
	n := len(l.Data)
	uvarintLen := (bits.Len64(uint64(n)|1) + 6) / 7
	return entryHeaderLen + uvarintLen + n + len(l.Extensions)
}

// appendEntry appends the encoding of l, without its index, to dst, in the
// layout the package documentation gives.
func appendEntry(dst []byte, l *raft.Log) []byte {
	var flags byte
	var at int64
	if !l.AppendedAt.IsZero() {
		flags |= flagAppendedAt
		at = l.AppendedAt.UnixNano()
	}
	dst = append(dst, entryFormat, byte(l.Type), flags)
	dst = binary.BigEndian.AppendUint64(dst, l.Term)
	dst = binary.BigEndian.AppendUint64(dst, uint64(at))
	dst = binary.AppendUvarint(dst, uint64(len(l.Data)))
	dst = append(dst, l.Data...)
	return append(dst, l.Extensions...)
}

// decodeEntry decodes the entry at index from v into l. Data and Extensions
// alias v (empty ones are nil): the caller hands over a v of its own.
func decodeEntry(index uint64, v []byte, l *raft.Log) error {
	corrupt := func(what string) error {
		return errs.Errorf("raftstore: log entry %d: %s: %w", index, what, ErrCorruptEntry)
	}
	if len(v) < entryHeaderLen {
		return corrupt(fmt.Sprintf("%d bytes, shorter than the %d-byte header", len(v), entryHeaderLen))
	}
	if v[0] != entryFormat {
		return corrupt(fmt.Sprintf("unknown entry format %d", v[0]))
	}
	flags := v[2]
	if flags&^knownFlags != 0 {
		return corrupt(fmt.Sprintf("unknown flags %#x", flags))
	}
	term := binary.BigEndian.Uint64(v[3:])
	at := int64(binary.BigEndian.Uint64(v[11:]))
	rest := v[entryHeaderLen:]
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)-w) {
		return corrupt("data length past the end of the entry")
	}
	rest = rest[w:]
	*l = raft.Log{Index: index, Term: term, Type: raft.LogType(v[1])}
	if n > 0 {
		l.Data = rest[:n:n]
	}
	if ext := rest[n:]; len(ext) > 0 {
		l.Extensions = ext
	}
	if flags&flagAppendedAt != 0 {
		l.AppendedAt = time.Unix(0, at)
	}
	return nil
}
