package kv_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stratadb/strata/raftstore"
	"github.com/stratadb/strata/raftstore/kv"
	"github.com/stratadb/strata/simpledb"
	"github.com/stretchr/testify/require"
)

func openFSM(t *testing.T, dir string) *kv.FSM {
	t.Helper()
	f, err := kv.OpenFSM(dir, nil)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func cmd(index uint64, c kv.Command) *raft.Log {
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: c.Encode()}
}

func put(index uint64, k, v string) *raft.Log {
	return cmd(index, kv.Command{Op: kv.OpPut, Key: []byte(k), Value: []byte(v)})
}

func requireValue(t *testing.T, f *kv.FSM, key, want string) {
	t.Helper()
	v, err := f.Get([]byte(key))
	if want == "" {
		require.ErrorIs(t, err, kv.ErrNotFound, "key %s", key)
		return
	}
	require.NoError(t, err, "key %s", key)
	require.Equal(t, want, string(v), "key %s", key)
}

func TestCommandRoundTrip(t *testing.T) {
	cases := []kv.Command{
		{Op: kv.OpPut, Key: []byte("k"), Value: []byte("v")},
		{Op: kv.OpPut, Key: []byte("k"), Value: nil},
		{Op: kv.OpPut, Key: bytes.Repeat([]byte("k"), 300), Value: bytes.Repeat([]byte("v"), 5000)},
		{Op: kv.OpDelete, Key: []byte("gone")},
		{Op: kv.OpNoop},
	}
	for _, c := range cases {
		got, err := kv.DecodeCommand(c.Encode())
		require.NoError(t, err)
		require.Equal(t, c.Op, got.Op)
		require.True(t, bytes.Equal(c.Key, got.Key))
		require.True(t, bytes.Equal(c.Value, got.Value))
	}
}

func TestBadCommands(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{"Empty", nil},
		{"OneByte", []byte{1}},
		{"UnknownFormat", []byte{9, 1, 1, 'k'}},
		{"UnknownOp", []byte{1, 9, 1, 'k'}},
		{"KeyPastEnd", []byte{1, 1, 5, 'k'}},
		{"PutEmptyKey", []byte{1, 1, 0, 'v'}},
		{"DeleteEmptyKey", []byte{1, 2, 0}},
	}
	f := openFSM(t, t.TempDir())
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := kv.DecodeCommand(c.data)
			require.ErrorIs(t, err, kv.ErrBadCommand)
			// Applied, it changes nothing but the applied index.
			resp := f.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: c.data})
			require.ErrorIs(t, resp.(error), kv.ErrBadCommand)
			require.Equal(t, uint64(i+1), f.AppliedIndex())
		})
	}
	it, err := f.DB().NewIterator([]byte("d"), []byte("e"))
	require.NoError(t, err)
	require.False(t, it.First())
	it.Close()
}

// ApplyBatch writes its commands as one batch, skips configuration
// entries but for their index, and skips what is already applied, across
// a reopen too.
func TestApplyBatch(t *testing.T) {
	dir := t.TempDir()
	f, err := kv.OpenFSM(dir, nil)
	require.NoError(t, err)
	resp := f.ApplyBatch([]*raft.Log{
		put(1, "a", "1"), put(2, "b", "2"),
		{Index: 3, Type: raft.LogConfiguration},
		cmd(4, kv.Command{Op: kv.OpDelete, Key: []byte("a")}),
		cmd(5, kv.Command{Op: kv.OpNoop}),
	})
	require.Equal(t, []interface{}{nil, nil, nil, nil, nil}, resp)
	require.Equal(t, uint64(5), f.AppliedIndex())
	requireValue(t, f, "a", "")
	requireValue(t, f, "b", "2")
	require.NoError(t, f.Close())

	f = openFSM(t, dir)
	require.Equal(t, uint64(5), f.AppliedIndex())
	// raft replays from its last snapshot: entries 1..5 again change nothing.
	f.ApplyBatch([]*raft.Log{put(1, "a", "1"), put(2, "b", "old"), put(6, "c", "3")})
	requireValue(t, f, "a", "")
	requireValue(t, f, "b", "2")
	requireValue(t, f, "c", "3")
	require.Equal(t, uint64(6), f.AppliedIndex())
}

// A snapshot taken while applies go on holds the state at the moment it
// was taken; Restore replaces another FSM's contents with it.
func TestSnapshotRestore(t *testing.T) {
	src := openFSM(t, t.TempDir())
	var logs []*raft.Log
	for i := range 3000 {
		logs = append(logs, put(uint64(i+1), fmt.Sprintf("key%05d", i), fmt.Sprintf("value%d", i)))
	}
	src.ApplyBatch(logs)
	snap, err := src.Snapshot()
	require.NoError(t, err)
	defer snap.Release()
	src.ApplyBatch([]*raft.Log{put(3001, "key00000", "after"), put(3002, "later", "x")})
	sink := &memSink{}
	require.NoError(t, snap.Persist(sink))
	require.True(t, sink.closed)

	dst, err := kv.OpenFSM(t.TempDir(), &kv.FSMOptions{RestoreBatchSize: 4096})
	require.NoError(t, err)
	defer dst.Close()
	dst.ApplyBatch([]*raft.Log{put(1, "stale", "gone"), put(2, "key00001", "stale")})
	require.NoError(t, dst.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	require.Equal(t, uint64(3000), dst.AppliedIndex())
	requireValue(t, dst, "stale", "")
	requireValue(t, dst, "key00000", "value0")
	requireValue(t, dst, "key00001", "value1")
	requireValue(t, dst, "key02999", "value2999")
	requireValue(t, dst, "later", "")
}

type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { s.closed = true; return nil }

// A damaged snapshot stream is ErrBadSnapshot: cut short, a flipped byte,
// a wrong count, another format.
func TestRestoreBadSnapshot(t *testing.T) {
	src := openFSM(t, t.TempDir())
	src.ApplyBatch([]*raft.Log{put(1, "a", "1"), put(2, "b", "2")})
	snap, err := src.Snapshot()
	require.NoError(t, err)
	sink := &memSink{}
	require.NoError(t, snap.Persist(sink))
	snap.Release()
	good := sink.Bytes()
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x40
		return b
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"Empty", nil},
		{"HeaderOnly", good[:27]},
		{"CutInRecords", good[:len(good)-15]},
		{"CutInTrailer", good[:len(good)-2]},
		{"FlippedValue", flip(27 + 3)},
		{"FlippedChecksum", flip(len(good) - 1)},
		{"NotASnapshot", []byte("hello, this is not a snapshot at all")},
		{"OtherFormat", append(append([]byte("strata-raftkv-snap"), 2), good[19:]...)},
		{"WrongCount", func() []byte {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint64(b[len(b)-12:], 3)
			return b
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := openFSM(t, t.TempDir())
			err := dst.Restore(io.NopCloser(bytes.NewReader(c.data)))
			require.ErrorIs(t, err, kv.ErrBadSnapshot)
		})
	}
}

// A directory that holds something else is refused, with nothing written.
func TestOpenFSMForeign(t *testing.T) {
	t.Run("OtherFiles", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644))
		_, err := kv.OpenFSM(dir, nil)
		require.ErrorIs(t, err, simpledb.ErrNotDB)
	})
	t.Run("LogStore", func(t *testing.T) {
		dir := t.TempDir()
		s, err := raftstore.Open(dir, nil)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		_, err = kv.OpenFSM(dir, nil)
		require.ErrorIs(t, err, kv.ErrNotFSM)
		// and the other way round
		fdir := t.TempDir()
		f, err := kv.OpenFSM(fdir, nil)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = raftstore.Open(fdir, nil)
		require.ErrorIs(t, err, raftstore.ErrNotRaftStore)
	})
}
