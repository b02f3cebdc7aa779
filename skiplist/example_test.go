package skiplist_test

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/skiplist"
)

func Example() {
	m := skiplist.NewOrdered[string, int](nil)
	m.Insert("banana", 2)
	m.Insert("apple", 1)
	m.Insert("cherry", 3)
	for k, v := range m.All() {
		fmt.Println(k, v)
	}
	// Output:
	// apple 1
	// banana 2
	// cherry 3
}

func ExampleMap_Insert() {
	m := skiplist.NewOrdered[string, int](nil)
	fmt.Println(m.Insert("a", 1))
	fmt.Println(m.Insert("a", 2)) // a is present: no change
	v, _ := m.Get("a")
	fmt.Println(v)
	// Output:
	// true
	// false
	// 1
}

func ExampleMap_Upsert() {
	m := skiplist.NewOrdered[string, int](nil)
	fmt.Println(m.Upsert("a", 1))
	fmt.Println(m.Upsert("a", 2)) // replaces the value
	v, ok := m.Get("a")
	fmt.Println(v, ok)
	// Output:
	// true
	// false
	// 2 true
}

func ExampleMap_Range() {
	m := skiplist.NewOrdered[int, string](nil)
	for i := range 10 {
		m.Insert(i, strings.Repeat("*", i))
	}
	for k, v := range m.Range(3, 6) { // [3, 6)
		fmt.Println(k, v)
	}
	// Output:
	// 3 ***
	// 4 ****
	// 5 *****
}

func ExampleMap_NewIterator() {
	m := skiplist.NewBytes[int](nil)
	for i, k := range []string{"a/1", "a/2", "b/1", "b/2", "c/1"} {
		m.Insert([]byte(k), i)
	}
	// All keys with prefix "b/": the bounds ["b/", "b0").
	lower, upper := []byte("b/"), []byte("b0")
	it := m.NewIterator(&lower, &upper)
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%d\n", it.Key(), it.Value())
	}
	// Output:
	// b/1=2
	// b/2=3
}

func ExampleIterator_SeekGE() {
	m := skiplist.NewOrdered[int, string](nil)
	for _, k := range []int{10, 20, 30} {
		m.Insert(k, fmt.Sprint("v", k))
	}
	it := m.NewIterator(nil, nil)
	if it.SeekGE(15) {
		fmt.Println(it.Key(), it.Value())
	}
	// Output:
	// 20 v20
}

func ExampleNew() {
	// Keys ordered by length, then lexicographically.
	byLength := func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	}
	m := skiplist.New[string, struct{}](byLength, &skiplist.Options{Seed: 42})
	for _, k := range []string{"ccc", "a", "bb", "aa"} {
		m.Insert(k, struct{}{})
	}
	for k := range m.All() {
		fmt.Print(k, " ")
	}
	fmt.Println()
	// Output:
	// a aa bb ccc
}
