package base

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Bytewise's separator is the shortest prefix of b past a, or a itself when
// no prefix of b shorter than b would do.
func TestBytewiseSeparator(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{"first bytes differ", "apple", "banana", "b"},
		{"shared prefix", "user1000", "user2000", "user2"},
		{"a is a prefix of b", "user", "user0000", "user0"},
		{"b one byte past the prefix", "abc", "abd", "abc"},
		{"b one byte past a", "abc", "abcd", "abc"},
		{"empty a", "", "xyz", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Bytewise.Separator(nil, []byte(tt.a), []byte(tt.b))
			require.Equal(t, tt.want, string(got))
			require.LessOrEqual(t, Bytewise.Compare([]byte(tt.a), got), 0)
			require.Negative(t, Bytewise.Compare(got, []byte(tt.b)))
		})
	}
}

// Separator appends to dst rather than replacing it.
func TestBytewiseSeparatorAppends(t *testing.T) {
	got := Bytewise.Separator([]byte("prefix:"), []byte("a"), []byte("bb"))
	require.Equal(t, "prefix:b", string(got))
}
