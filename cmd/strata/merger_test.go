package main

import (
	"bytes"
	"testing"
)

// operands reads what rawMerge wrote back as the versions it took, and any
// other bytes (a stored value, damaged or not) as one value, without
// failing.
func FuzzOperands(f *testing.F) {
	for _, seed := range [][]byte{nil, []byte("v"), rawFold, append(append([]byte(nil), rawFold...), 200), []byte("a\x00b")} {
		f.Add(seed, []byte("x"))
	}
	f.Fuzz(func(t *testing.T, older, newer []byte) {
		// Any bytes: a list after rawFold, or the value itself.
		if parts := operands(older); len(parts) == 0 || len(parts) == 1 && !bytes.Equal(parts[0], older) {
			t.Fatalf("operands(%q) = %q", older, parts)
		}
		// A fold lists the versions of both sides, older first.
		folded, err := rawMerge(nil, older, newer)
		if err != nil {
			t.Fatal(err)
		}
		want := append(operands(older), operands(newer)...)
		got := operands(folded)
		if len(got) != len(want) {
			t.Fatalf("rawMerge(%q, %q) lists %q, want %q", older, newer, got, want)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("rawMerge(%q, %q) lists %q, want %q", older, newer, got, want)
			}
		}
	})
}
