package memstore

import (
	"bytes"
	"sync/atomic"
)

// newestTable remembers the newest entry of recently inserted keys, by a
// hash of the key, so that a write that stacks or folds onto a hot key's
// entry, and a read of it at a recent sequence number, find the entry
// without a search. A slot holds the addr of the last entry inserted whose
// key hashed to it, and a tag of that hash; another key's insert may take
// the slot over, and then a lookup misses and searches as before.
//
// The writer stores a slot's addr, then its tag; a reader loads them
// without a lock and may see one key's tag with another's addr, so every
// hit compares the entry's key: the tag only spares the cache miss of
// reading a key that cannot match.
type newestTable [newestSlots]newestSlot

type newestSlot struct {
	x   atomic.Uint64
	tag atomic.Uint32
}

const newestSlots = 4096

// newestAfter is the number of writes at which a memstore starts its
// table: a small memstore (an indexed batch's) searches a short list, and
// need not pay for 64 KiB. A variable for tests, which start it sooner.
var newestAfter = 1024

// slot returns the slot of the key whose Hash is h, and its tag.
func (t *newestTable) slot(h uint64) (*newestSlot, uint32) {
	return &t[h%newestSlots], uint32(h >> 32)
}

// newestOf returns the newest entry of key, whose Hash is h, if the table
// knows it, else nil. A reader that loaded a sequence number after the
// writer published the entry finds it, or one newer, if the slot still
// holds the key.
func (l *list) newestOf(key []byte, h uint64) *node {
	t := l.newest.Load()
	if t == nil {
		return nil
	}
	s, tag := t.slot(h)
	if s.tag.Load() != tag {
		return nil
	}
	x := addr(s.x.Load())
	if x == 0 {
		return nil
	}
	_, n := l.arena.node(l.arena.load(), x)
	if !bytes.Equal(n.key(), key) {
		return nil
	}
	return n
}

// noteNewest records n, at x, as the newest entry of its key, whose Hash
// is h: unless the slot holds a newer entry of the same key, which an
// ApplyAll inserting a key's versions newest first leaves there. The
// caller is the writer, once n is linked.
func (l *list) noteNewest(n *node, x addr, h uint64) {
	t := l.newest.Load()
	if t == nil {
		return
	}
	s, tag := t.slot(h)
	if s.tag.Load() == tag {
		if old := addr(s.x.Load()); old != 0 {
			_, o := l.arena.node(l.arena.bases, old)
			if o.seq() > n.seq() && bytes.Equal(o.key(), n.key()) {
				return
			}
		}
	}
	s.x.Store(uint64(x))
	s.tag.Store(tag)
}

// wrote counts a write, and starts the table at the newestAfter-th. The
// caller is the writer.
func (m *Memstore) wrote() {
	if m.writes++; m.writes == newestAfter {
		m.list.newest.Store(new(newestTable))
	}
}
