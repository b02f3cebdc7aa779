// Package itertest checks Strata's iterators against a model: a Cursor over
// the keys an iterator must show, in order, moved by the same First, Last,
// SeekGE, SeekLT, Next and Prev. The Cursor has the semantics every Strata
// iterator promises at its ends (Pebble's): once a move runs off one end, a
// move the other way comes back to the entry at that end; before the first
// positioning move, Next and Prev find nothing, or, after StartAtEnds, move
// to the first and the last entry (simpledb's Iterator).
//
//	c := itertest.NewCursor(keys)          // the keys of the entries, in order
//	itertest.Walk(t, rng, it, c, 500, randomKey, func(i int) { ...compare entry i... })
package itertest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Iterator is what Walk moves: every Strata iterator.
type Iterator interface {
	First() bool
	Last() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Next() bool
	Prev() bool
	Valid() bool
	Key() []byte
}

// Cursor is a position among the entries whose keys it holds, in order
// (bytewise, or the comparator's, with repeats for versions of one key): -1
// is before the first entry, len(keys) past the last.
type Cursor struct {
	keys       [][]byte
	cmp        func(a, b []byte) int
	pos        int
	positioned bool
	atEnds     bool // see StartAtEnds
}

// NewCursor returns an unpositioned cursor over keys in bytewise order.
func NewCursor(keys [][]byte) *Cursor { return NewCursorFunc(keys, bytes.Compare) }

// NewCursorFunc returns an unpositioned cursor over keys in cmp's order.
func NewCursorFunc(keys [][]byte, cmp func(a, b []byte) int) *Cursor {
	return &Cursor{keys: keys, cmp: cmp}
}

// StartAtEnds makes Next and Prev before the first positioning move act as
// First and Last do, as simpledb's Iterator has them; it returns c.
func (c *Cursor) StartAtEnds() *Cursor {
	c.atEnds = true
	return c
}

func (c *Cursor) valid() bool { return c.positioned && c.pos >= 0 && c.pos < len(c.keys) }

func (c *Cursor) set(i int) bool {
	c.positioned, c.pos = true, i
	return c.valid()
}

// search returns the index of the first entry whose key is at or after key.
func (c *Cursor) search(key []byte) int {
	return sort.Search(len(c.keys), func(i int) bool { return c.cmp(c.keys[i], key) >= 0 })
}

// The moves, as an iterator's.

func (c *Cursor) First() bool            { return c.set(0) }
func (c *Cursor) Last() bool             { return c.set(len(c.keys) - 1) }
func (c *Cursor) SeekGE(key []byte) bool { return c.set(c.search(key)) }
func (c *Cursor) SeekLT(key []byte) bool { return c.set(c.search(key) - 1) }

func (c *Cursor) Next() bool {
	if !c.positioned && c.atEnds {
		return c.First()
	}
	return c.positioned && c.pos < len(c.keys) && c.set(c.pos+1)
}

func (c *Cursor) Prev() bool {
	if !c.positioned && c.atEnds {
		return c.Last()
	}
	return c.positioned && c.pos >= 0 && c.set(c.pos-1)
}

// Walk makes steps random moves on it and on c, and requires after each
// that they agree: on the move's result, on Valid, and on the key; at, if
// not nil, then gets the index of the entry both are at, to compare the
// rest of it. Seek targets come from key. Next and Prev come in runs, so
// that a walk reaches the ends, turns there, and switches direction
// anywhere.
func Walk(t testing.TB, rng *rand.Rand, it Iterator, c *Cursor, steps int, key func() []byte, at func(i int), msg string) {
	t.Helper()
	for step := range steps {
		// Walks are long: the checks cost little unless they fail.
		move := func(name string, got, want bool) {
			var wantKey []byte
			if want {
				wantKey = c.keys[c.pos]
			}
			if got != want || it.Valid() != want || !bytes.Equal(it.Key(), wantKey) || want && it.Key() == nil {
				require.Failf(t, "iterator and model disagree", "%s: step %d: %s: got %v, Valid %v, key %q; want %v, key %q",
					msg, step, name, got, it.Valid(), it.Key(), want, wantKey)
			}
			if want && at != nil {
				at(c.pos)
			}
		}
		switch op := rng.IntN(20); op {
		case 0:
			move("First", it.First(), c.First())
		case 1:
			move("Last", it.Last(), c.Last())
		case 2:
			k := key()
			move(fmt.Sprintf("SeekGE(%q)", k), it.SeekGE(k), c.SeekGE(k))
		case 3:
			k := key()
			move(fmt.Sprintf("SeekLT(%q)", k), it.SeekLT(k), c.SeekLT(k))
		default:
			for range 1 + rng.IntN(12) {
				if op%2 == 0 {
					move("Next", it.Next(), c.Next())
				} else {
					move("Prev", it.Prev(), c.Prev())
				}
			}
		}
	}
}
