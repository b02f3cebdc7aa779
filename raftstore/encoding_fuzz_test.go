package raftstore

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// FuzzDecodeEntry decodes any stored value as a log entry: an error is
// ErrCorruptEntry, never a panic, and an entry that decodes encodes back to
// one that decodes the same.
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
		var again raft.Log
		if err := decodeEntry(7, appendEntry(nil, &l), &again); err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if again.Index != l.Index || again.Term != l.Term || again.Type != l.Type ||
			string(again.Data) != string(l.Data) || string(again.Extensions) != string(l.Extensions) ||
			!again.AppendedAt.Equal(l.AppendedAt) {
			t.Fatalf("round trip: %+v, then %+v", l, again)
		}
	})
}
