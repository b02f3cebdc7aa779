package skiplist

import "iter"

// Iterator walks a Map in ascending key order, optionally within bounds
// [lower, upper). It sees every key that was in the map when it was
// positioned and stays ahead of it; keys inserted concurrently may or may not
// be seen. An Iterator is not safe for concurrent use by several goroutines,
// but any number of iterators may run concurrently with each other and with
// the writer.
type Iterator[K, V any] struct {
	m *Map[K, V]
	n *node[K, V]
	// lower and upper are the bounds, nil when unbounded.
	lower, upper *K
	// lowerAbbrev and upperAbbrev are the bounds' abbreviations, computed
	// once: upper is compared at every step.
	lowerAbbrev, upperAbbrev uint64
}

// NewIterator returns an unpositioned iterator over the keys in [*lower,
// *upper). A nil bound leaves that side unbounded. The iterator keeps the
// pointers, not copies of the bounds: the keys they point at must not change
// while it is in use. Call First or SeekGE to position it.
func (m *Map[K, V]) NewIterator(lower, upper *K) *Iterator[K, V] {
	it := &Iterator[K, V]{m: m, lower: lower, upper: upper}
	if lower != nil {
		it.lowerAbbrev = m.abbreviationOf(*lower)
	}
	if upper != nil {
		it.upperAbbrev = m.abbreviationOf(*upper)
	}
	return it
}

// First moves to the smallest key within the bounds and reports whether
// there is one.
func (it *Iterator[K, V]) First() bool {
	if it.lower != nil {
		it.n, _ = it.m.find(*it.lower, it.lowerAbbrev, nil)
	} else {
		it.n = it.m.head.link(0).Load()
	}
	return it.checkUpper()
}

// SeekGE moves to the smallest key within the bounds that is greater than or
// equal to key and reports whether there is one. A key below the lower bound
// seeks to the lower bound.
func (it *Iterator[K, V]) SeekGE(key K) bool {
	if it.lower != nil && it.m.cmp(key, *it.lower) < 0 {
		it.n, _ = it.m.find(*it.lower, it.lowerAbbrev, nil)
	} else {
		it.n, _ = it.m.find(key, it.m.abbreviationOf(key), nil)
	}
	return it.checkUpper()
}

// Next moves to the next key and reports whether there is one within the
// bounds. On an iterator that is not valid it returns false.
func (it *Iterator[K, V]) Next() bool {
	if it.n == nil {
		return false
	}
	it.n = it.n.link(0).Load()
	return it.checkUpper()
}

// Valid reports whether the iterator is positioned at a key.
func (it *Iterator[K, V]) Valid() bool {
	return it.n != nil
}

// Key returns the current key, or the zero K when the iterator is not
// valid (unpositioned or exhausted). It is the key as the map stores it,
// not a copy: a key that refers to memory, such as NewBytes' []byte (the
// very slice given to Insert), shares it with the map and must not be
// modified, which would break the order searches and iterators rely on.
// Keys are never removed, so it stays valid after the iterator moves.
func (it *Iterator[K, V]) Key() K {
	if it.n == nil {
		var zero K
		return zero
	}
	return it.n.key
}

// Value returns the current value: the value the key held when Value was
// called. It returns the zero V when the iterator is not valid. Like Key,
// it is the stored value, not a copy: memory it refers to is shared with
// the map and every reader, and must not be modified, since readers on
// other goroutines read it without a lock.
func (it *Iterator[K, V]) Value() V {
	if it.n == nil {
		var zero V
		return zero
	}
	return it.n.load()
}

// checkUpper invalidates the iterator when it has passed the upper bound and
// reports whether it is still valid. It compares abbreviations first, as a
// search does, so most steps do not fetch the key's memory.
func (it *Iterator[K, V]) checkUpper() bool {
	if it.n != nil && it.upper != nil && it.m.compareNode(it.n, *it.upper, it.upperAbbrev) >= 0 {
		it.n = nil
	}
	return it.n != nil
}

// All returns every key and value in ascending key order, for use in a range
// loop. Like an Iterator, it may run concurrently with the writer. Keys and
// values are the stored ones, to be left unmodified (see Iterator.Key).
func (m *Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for n := m.head.link(0).Load(); n != nil; n = n.link(0).Load() {
			if !yield(n.key, n.load()) {
				return
			}
		}
	}
}

// Range returns the keys in [lower, upper) and their values in ascending key
// order, for use in a range loop. Like an Iterator, it may run concurrently
// with the writer. Keys and values are the stored ones, to be left
// unmodified (see Iterator.Key).
func (m *Map[K, V]) Range(lower, upper K) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		it := m.NewIterator(&lower, &upper)
		for ok := it.First(); ok; ok = it.Next() {
			if !yield(it.Key(), it.Value()) {
				return
			}
		}
	}
}
