package simpledb

import (
	"expvar"

	"github.com/stratadb/strata/internal/errs"
)

// PublishExpvar publishes the database's Metrics under name with the
// standard library's expvar, so that a program serving expvar's handler
// (net/http's /debug/vars) shows them as JSON, durations in nanoseconds.
// Each read of the variable calls Metrics. A name already published is
// ErrInvalidOption: expvar cannot take one back, so a database reopened in
// the same process publishes under a new name, or a caller publishes an
// expvar.Func of its own that reads whichever database is open.
func (d *DB) PublishExpvar(name string) error {
	if name == "" || expvar.Get(name) != nil {
		return errs.Errorf("%w: expvar name %q is empty or taken", ErrInvalidOption, name)
	}
	expvar.Publish(name, expvar.Func(func() any { return d.Metrics() }))
	return nil
}
