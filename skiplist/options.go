package skiplist

// Options configures a Map. The zero value is valid: every field's comment
// states the default that its zero value selects.
type Options struct {
	// Seed seeds the map's own source of node heights. Two maps built with
	// the same Seed and the same sequence of writes have identical shapes,
	// so tests and benchmarks are reproducible; no global random source is
	// used. The default, 0, is a fixed seed like any other.
	Seed uint64
}
