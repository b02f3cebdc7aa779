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

// abbreviateString is AbbreviateBytes for strings.
func abbreviateString(key string) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(unsafe.Slice(unsafe.StringData(key), 8))
	}
	var v uint64
	for i := range len(key) {
		v |= uint64(key[i]) << (56 - 8*i)
	}
	return v
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
