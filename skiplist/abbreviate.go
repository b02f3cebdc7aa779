package skiplist

import (
	"encoding/binary"
	"reflect"
	"unsafe"
)

// AbbreviateBytes returns the first 8 bytes of key, padded with zeros, as a
// big-endian number: an abbreviation consistent with bytes.Compare, for use
// with NewAbbreviated.
func AbbreviateBytes(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var v uint64
	for i, b := range key {
		v |= uint64(b) << (56 - 8*i)
	}
	return v
}

// abbreviateString is AbbreviateBytes for strings. It views the string's
// bytes as a slice, without copying them; AbbreviateBytes only reads them.
func abbreviateString(key string) uint64 {
	return AbbreviateBytes(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// orderedAbbreviation returns an abbreviation for the cmp.Ordered type K
// when one saves work: for string kinds, whose bytes a comparison must
// otherwise fetch from elsewhere in memory. Numbers are compared in the node
// already and get none.
func orderedAbbreviation[K any]() func(K) uint64 {
	if reflect.TypeFor[K]().Kind() != reflect.String {
		return nil
	}
	return func(k K) uint64 {
		// K's underlying type is string, so its memory is a string's.
		return abbreviateString(*(*string)(unsafe.Pointer(&k)))
	}
}
