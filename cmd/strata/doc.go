// Command strata inspects, verifies, scans and edits by hand Strata
// databases, tables, blob files and recordio files (Strata's own and
// go-sstables' v1 to v4), as ldb and sst_dump do for RocksDB and pebble
// tool for Pebble.
//
//	go install github.com/stratadb/strata/cmd/strata@latest
//	strata help                      # the commands
//	strata db ls DIR                 # levels, tables, blob files, logs, manifest
//	strata db verify DIR             # every checksum; exit status 1 on damage
//	strata db scan DIR --prefix P    # key-value pairs
//	strata sst dump FILE --entries   # a table's properties, index, entries
//	strata blob dump FILE            # a blob file's values and trailer
//
// Inspection commands (ls, scan, get, checkpoint) open a database as a
// follower (simpledb.Options.Follow): they take no lock, and read a
// database another process is writing as of one moment. put, delete and
// compact open it for writing, and never create one
// (simpledb.Options.ErrorIfNotExists): a database another process holds
// is refused at once with the lock's error, not waited on. db verify reads
// the files without opening the database (simpledb.Verify), so that damage
// Open would refuse is reported too, all of it, not only the first; it
// too takes no lock.
//
// Output is for people by default: aligned columns, sizes in KiB and MiB,
// keys and values in the key syntax, which is also how KEY and VALUE
// arguments and --lower, --upper and --prefix are read, so that what
// strata prints is what to pass back:
//
//	user:42        plain text prints as itself: printable UTF-8 that does
//	0x1886         not begin with a double quote, begin or end with a
//	               space, or hold two spaces in a row
//	"\x18\x86"     anything else prints as a Go double-quoted string
//	"a\nb"         (strconv.Quote); an argument that begins with a double
//	"\"quoted\""   quote is read as one (strconv.Unquote), or refused
//	""             if it is not one, and any other argument is its text
//
// The first byte decides, and a key that begins with a double quote always
// prints quoted, so each key has one printed form and no printed form is
// two keys; a binary key cannot pass for text that begins with 0x, as a
// hex form would. --hex prints and reads hex instead (0x prefix optional
// on input). --json prints one JSON object per line; a key or value goes
// under its name when it is printable text that does not begin with a
// double quote, so that the string reads back as itself, else under its
// name with _hex, in hex. A scan that prints nothing says so on standard
// error, with the bounds as read. Exit status: 0 success, 1 damage found,
// a key not found or a failure, 2 a usage error, a path that is not what
// the command reads, or a key or value the database refuses (empty, or
// too large) or cannot read (a double-quoted string that is not one).
//
// --value-format sets how values alone print, and VALUE reads: text, hex,
// or uint64le or uint64be, an 8-byte number in decimal (Uint64AddMerger's
// counters, sequences), a JSON number with --json. Keys keep their own
// form, so a counter under a text key prints as "hits 8".
//
// A database written with a merger opens with it when this build ships
// it (simpledb.Uint64AddMerger, AppendMerger), or as --merger names one.
// Another is refused with ErrMergerMismatch; --merger none opens it
// read-only, and a key whose newest versions are merge operands prints as
// the list of them over its value, unfolded: operands(5, 1, 2). A lone
// operand prints as a value would.
//
// verify, compact, checkpoint and scan show a progress bar on standard
// error when it is a terminal, and nothing otherwise. The bar is
// github.com/schollz/progressbar/v3: maintained, small (two small
// dependencies), and it draws byte counts, rates and spinners for totals
// not known ahead, which is what these commands need; a bar of our own
// would be terminal handling to maintain for no gain. Whether standard
// error is a terminal is golang.org/x/term's IsTerminal.
package main
