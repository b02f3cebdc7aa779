package base

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckKey(t *testing.T) {
	tests := []struct {
		name string
		key  []byte
		want error
	}{
		{"nil", nil, ErrEmptyKey},
		{"empty", []byte{}, ErrEmptyKey},
		{"one byte", []byte{0}, nil},
		{"at the limit", make([]byte, MaxKeySize), nil},
		{"over the limit", make([]byte, MaxKeySize+1), ErrKeyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKey(tt.key)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
		})
	}
}

func TestCheckKind(t *testing.T) {
	require.NoError(t, CheckKind(KindSet))
	require.NoError(t, CheckKind(KindDelete))
	require.NoError(t, CheckKind(KindMerge))
	require.ErrorIs(t, CheckKind(KindSeek), ErrBadKind)
	require.ErrorIs(t, CheckKind(KindRangeDelete), ErrBadKind)
	require.ErrorIs(t, CheckKind(4), ErrBadKind)
}

func TestTrailer(t *testing.T) {
	for _, seq := range []uint64{0, 1, 1 << 40, MaxSeq} {
		for _, kind := range []Kind{KindDelete, KindSet, KindMerge, KindSeek} {
			tr := MakeTrailer(seq, kind)
			require.Equal(t, seq, TrailerSeq(tr))
			require.Equal(t, kind, TrailerKind(tr))
		}
	}
	// Within a key entries sort by trailer descending: a seek trailer comes
	// before every version at its seq and below, after every newer one.
	seek := MakeTrailer(10, KindSeek)
	require.Greater(t, seek, MakeTrailer(10, KindSet))
	require.Less(t, seek, MakeTrailer(11, KindDelete))
}
