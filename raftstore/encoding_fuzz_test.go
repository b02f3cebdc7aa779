package raftstore

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// FuzzDecodeEntry decodes any stored value as a log entry: an error is
// ErrCorruptEntry, never a panic, and an entry that decodes encodes back to
// one that decodes the same, of the length entryLen says.
func FuzzDecodeEntry(f *testing.F) {
	f.Add(appendEntry(nil, &raft.Log{Term: 3, Type: raft.LogCommand, Data: []byte("data"), Extensions: []byte("ext"), AppendedAt: time.Unix(5, 6)}))
	f.Add(appendEntry(nil, &raft.Log{Term: 1, Type: raft.LogNoop}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		var l raft.Log
		if err := decodeEntry(7, v, &l); err != nil {
			if !errors.Is(err, ErrCorruptEntry) {
				t.Fatalf("error that is not ErrCorruptEntry: %v", err)
			}
			return
		}
		encoded := appendEntry(nil, &l)
		if len(encoded) != entryLen(&l) {
			t.Fatalf("an entry of %d bytes, %d said", len(encoded), entryLen(&l))
		}
		var again raft.Log
		if err := decodeEntry(7, encoded, &again); err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if again.Index != l.Index || again.Term != l.Term || again.Type != l.Type ||
			string(again.Data) != string(l.Data) || string(again.Extensions) != string(l.Extensions) ||
			!again.AppendedAt.Equal(l.AppendedAt) {
			t.Fatalf("round trip: %+v, then %+v", l, again)
		}
	})
}

// entryLen says the length appendEntry writes, for data of every length a
// uvarint takes 1 to 3 bytes for.
func TestEntryLen(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 1000, 16383, 16384, 1 << 20} {
		l := &raft.Log{Term: 9, Data: make([]byte, n), Extensions: []byte("ext")}
		if got, want := entryLen(l), len(appendEntry(nil, l)); got != want {
			t.Errorf("data of %d bytes: entryLen %d, appendEntry wrote %d", n, got, want)
		}
	}
}
