package kv

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// FuzzDecodeCommand decodes any log entry's data as a command: an error is
// ErrBadCommand, never a panic, and a command that decodes encodes to one
// that decodes the same.
func FuzzDecodeCommand(f *testing.F) {
	f.Add(Command{Op: OpPut, Key: []byte("k"), Value: []byte("v")}.Encode())
	f.Add(Command{Op: OpDelete, Key: []byte("k")}.Encode())
	f.Add(Command{Op: OpNoop}.Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCommand(data)
		if err != nil {
			if !errors.Is(err, ErrBadCommand) {
				t.Fatalf("error that is not ErrBadCommand: %v", err)
			}
			return
		}
		again, err := DecodeCommand(c.Encode())
		if err != nil || again.Op != c.Op || !bytes.Equal(again.Key, c.Key) || !bytes.Equal(again.Value, c.Value) {
			t.Fatalf("round trip of %x: %+v, then %+v, %v", data, c, again, err)
		}
	})
}

// FuzzSnapshotStream reads any bytes as a snapshot stream: it ends in
// ErrBadSnapshot or reads whole, never panics, and a damaged length
// allocates no more than the stream holds.
func FuzzSnapshotStream(f *testing.F) {
	dir := f.TempDir()
	fsm, err := OpenFSM(dir, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer fsm.Close()
	for i, kv := range [][2]string{{"a", "1"}, {"b", ""}, {"c", "three"}} {
		c := Command{Op: OpPut, Key: []byte(kv[0]), Value: []byte(kv[1])}
		fsm.Apply(&raft.Log{Index: uint64(i + 1), Term: 1, Type: raft.LogCommand, Data: c.Encode()})
	}
	snap, err := fsm.Snapshot()
	if err != nil {
		f.Fatal(err)
	}
	var valid bytes.Buffer
	if err := snap.(*fsmSnapshot).persist(&valid); err != nil {
		f.Fatal(err)
	}
	snap.Release()
	f.Add(valid.Bytes())
	f.Add([]byte(snapshotMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		sr, _, err := newSnapshotReader(bytes.NewReader(data))
		for err == nil {
			var ok bool
			if _, _, ok, err = sr.next(); !ok {
				break
			}
		}
		if err != nil && !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("error that is not ErrBadSnapshot: %v", err)
		}
	})
}
