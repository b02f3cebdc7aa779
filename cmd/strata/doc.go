// Command strata inspects, verifies, scans and edits by hand Strata
// databases, tables and recordio files (Strata's own and go-sstables' v1
// to v4), as ldb and sst_dump do for RocksDB and pebble tool for Pebble.
//
//	go install github.com/stratadb/strata/cmd/strata@latest
//	strata help                      # the commands
//	strata db ls DIR                 # levels, tables, logs, manifest
//	strata db verify DIR             # every checksum; exit status 1 on damage
//	strata db scan DIR --prefix P    # key-value pairs
//	strata sst dump FILE --entries   # a table's properties, index, entries
//
// Inspection commands open a database read-only (simpledb.Options.ReadOnly),
// which takes the directory's lock: a database another process holds is
// refused at once with the lock's error, not waited on. put, delete and
// compact open it for writing, and never create one
// (simpledb.Options.ErrorIfNotExists). db verify reads the files without
// opening the database (simpledb.Verify), so that damage Open would
// refuse is reported too, all of it, not only the first.
//
// Output is for people by default: aligned columns, sizes in KiB and MiB,
// keys and values as text when they are printable UTF-8, else as hex with
// a 0x prefix (--hex: always hex, and KEY and VALUE arguments are read as
// hex). --json prints one JSON object per line; a key or value that is not
// printable text goes under its name with _hex, in hex. Exit status: 0
// success, 1 damage found, a key not found or a failure, 2 a usage error,
// a path that is not what the command reads, or a key or value the
// database refuses (empty, or too large).
//
// verify, compact, checkpoint and scan show a progress bar on standard
// error when it is a terminal, and nothing otherwise. The bar is
// github.com/schollz/progressbar/v3: maintained, small (two small
// dependencies), and it draws byte counts, rates and spinners for totals
// not known ahead, which is what these commands need; a bar of our own
// would be terminal handling to maintain for no gain. Whether standard
// error is a terminal is golang.org/x/term's IsTerminal.
package main
