package memstore_test

import (
	"fmt"

	"github.com/stratadb/strata/memstore"
)

func Example() {
	m := memstore.New(nil)
	m.Put([]byte("apple"), []byte("red"))
	m.Put([]byte("banana"), []byte("yellow"))
	m.Put([]byte("cherry"), []byte("dark red"))
	m.Delete([]byte("banana"))

	v, res := m.Get([]byte("apple"))
	fmt.Printf("apple: %s (%v)\n", v, res)
	_, res = m.Get([]byte("banana"))
	fmt.Println("banana:", res)
	_, res = m.Get([]byte("durian"))
	fmt.Println("durian:", res)

	for k, v := range m.All() {
		fmt.Printf("%s=%s\n", k, v)
	}
	fmt.Println(m.Len(), "entries, last sequence number", m.LastSeq())
	// Output:
	// apple: red (found)
	// banana: deleted
	// durian: absent
	// apple=red
	// cherry=dark red
	// 4 entries, last sequence number 4
}

func ExampleMemstore_GetAt() {
	m := memstore.New(nil)
	m.Put([]byte("k"), []byte("v1"))
	snapshot := m.LastSeq()
	m.Put([]byte("k"), []byte("v2"))
	m.Delete([]byte("k"))

	v, res := m.GetAt([]byte("k"), snapshot)
	fmt.Printf("at %d: %s (%v)\n", snapshot, v, res)
	_, res = m.Get([]byte("k"))
	fmt.Println("now:", res)
	// Output:
	// at 1: v1 (found)
	// now: deleted
}

func ExampleMemstore_Apply() {
	// A database assigns sequence numbers to a batch and applies it.
	m := memstore.New(nil)
	batch := []struct {
		kind       memstore.Kind
		key, value string
	}{
		{memstore.KindSet, "a", "1"},
		{memstore.KindSet, "b", "2"},
		{memstore.KindDelete, "a", ""},
	}
	first := m.LastSeq() + 1
	for i, w := range batch {
		if err := m.Apply(first+uint64(i), w.kind, []byte(w.key), []byte(w.value)); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("last sequence number", m.LastSeq())

	// Sequence numbers must increase.
	err := m.Apply(2, memstore.KindSet, []byte("c"), nil)
	fmt.Println(err)
	// Output:
	// last sequence number 3
	// memstore: sequence number not increasing: sequence number 2, last 3
}

func ExampleMemstore_NewIterator() {
	m := memstore.New(nil)
	for _, k := range []string{"user/1", "user/2", "user/3", "vendor/1"} {
		m.Put([]byte(k), []byte("v-"+k))
	}
	snapshot := m.LastSeq()
	m.Delete([]byte("user/2")) // after the snapshot

	// The keys with prefix "user/", as of the snapshot.
	it := m.NewIterator(&memstore.IterOptions{
		LowerBound: []byte("user/"),
		UpperBound: []byte("user0"),
		Seq:        snapshot,
	})
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	// Output:
	// user/1=v-user/1
	// user/2=v-user/2
	// user/3=v-user/3
}

func ExampleMemstore_NewEntryIterator() {
	m := memstore.New(nil)
	m.Put([]byte("a"), []byte("1"))
	m.Put([]byte("b"), []byte("2"))
	m.Put([]byte("a"), []byte("3"))
	m.Delete([]byte("b"))

	// Every version, newest first within a key: what a flush writes.
	it := m.NewEntryIterator(nil)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s seq=%d %v %q\n", it.Key(), it.Seq(), it.Kind(), it.Value())
	}
	// Output:
	// a seq=3 set "3"
	// a seq=1 set "1"
	// b seq=4 delete ""
	// b seq=2 set "2"
}

func ExampleIterator_SeekGE() {
	m := memstore.New(nil)
	for _, k := range []string{"a", "c", "e"} {
		m.Put([]byte(k), nil)
	}
	it := m.NewIterator(nil)
	defer it.Close()
	for ok := it.SeekGE([]byte("b")); ok; ok = it.Next() {
		fmt.Printf("%s ", it.Key())
	}
	fmt.Println()
	// Output:
	// c e
}

func ExampleMemstore_Backward() {
	m := memstore.New(nil)
	for _, k := range []string{"a", "b", "c"} {
		m.Put([]byte(k), []byte("v-"+k))
	}
	m.Delete([]byte("b"))
	for k, v := range m.Backward() {
		fmt.Printf("%s=%s\n", k, v)
	}
	// Output:
	// c=v-c
	// a=v-a
}

func ExampleIterator_SeekLT() {
	m := memstore.New(nil)
	for _, k := range []string{"a", "c", "e", "g"} {
		m.Put([]byte(k), nil)
	}
	it := m.NewIterator(nil)
	defer it.Close()
	// The keys before "f", from the last down; then back up two.
	for ok := it.SeekLT([]byte("f")); ok; ok = it.Prev() {
		fmt.Printf("%s ", it.Key())
	}
	it.Next() // past the start, Next turns back to the first key
	it.Next()
	fmt.Printf("then %s\n", it.Key())
	// Output:
	// e c a then c
}

// ApplyMerge folds operands into a counter's entry: the memstore keeps one
// entry, and a read at an older sequence number still sees the count as
// it was then.
func ExampleMemstore_ApplyMerge() {
	m := memstore.New(nil)
	concat := memstore.Folder{Merge: func(_, older, newer []byte) ([]byte, error) {
		return append(append([]byte{}, older...), newer...), nil
	}}
	m.Apply(1, memstore.KindSet, []byte("log"), []byte("a"))
	for seq, op := range []string{"b", "c", "d"} {
		folded, _ := m.ApplyMerge(uint64(seq+2), []byte("log"), []byte(op), concat)
		fmt.Println("folded:", folded)
	}
	v, _ := m.Get([]byte("log"))
	old, _ := m.GetAt([]byte("log"), 2)
	fmt.Printf("%s, at 2: %s; %d entry\n", v, old, m.Len())
	// Output:
	// folded: true
	// folded: true
	// folded: true
	// abcd, at 2: ab; 1 entry
}
