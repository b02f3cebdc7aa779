package memstore

import (
	"os"
	"testing"
)

// TestMain starts every list's table of newest entries after 16 entries,
// so that the tests' small memstores read and write through it, and
// through the search before it.
func TestMain(m *testing.M) {
	newestAfter = 16
	os.Exit(m.Run())
}
