// Package units formats quantities for people: sizes in binary units and
// durations to three significant digits, as the CLI and Metrics print
// them.
package units

import (
	"fmt"
	"time"
)

// Bytes formats a byte count: B below 1 KiB, else KiB, MiB, GiB or TiB
// with one decimal.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if f < unit {
			break
		}
		f, suffix = f/unit, s
	}
	return fmt.Sprintf("%.1f %s", f, suffix)
}

// Duration formats d rounded to three significant digits, "-" for 0.
func Duration(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	unit := time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit).String()
}
