package memstore

// Options configures a Memstore. The zero value is valid: every field's
// comment states the default that its zero value selects.
type Options struct {
	// Seed seeds the heights of the nodes of the memstore's skiplist, so
	// that two memstores given the same writes have the same shape. The
	// default, 0, is a fixed seed like any other.
	Seed uint64
}
