package main

// keySyntax ends the help of the commands that read keys: the syntax of
// keys.go.
const keySyntax = `

keys and values:
  A key or value prints as itself when it is plain text: printable UTF-8
  that does not begin with a double quote, begin or end with a space, or
  hold two spaces in a row. Any other prints as a Go double-quoted string:
  "\x18\x86", "a\nb", "\"quoted\"", "" (empty). KEY, VALUE, --lower,
  --upper and --prefix are read the same way: an argument that begins with
  a double quote is such a string, any other is the text itself (0x1886 is
  six characters of text). What strata prints is what to pass back, in
  single quotes for the shell. With --hex, keys and values print in hex and
  those arguments are read in hex (00ff or 0x00ff). --value-format sets
  how values alone print and VALUE reads: text (the syntax above, whatever
  --hex says), hex, or uint64le or uint64be, an 8-byte number in decimal
  (a Uint64AddMerger counter, a sequence; a value of another length prints
  its length, then the value as text). With --json, a key or value goes
  under its name when it is printable text that does not begin with a
  double quote, which reads back as itself; else under its name with
  _hex, in hex; a uint64 value is a JSON number.`

// commands lists strata's commands, in the order help shows them.
var commands = []command{
	{
		name: "db ls", args: "DIR", nargs: 1, run: dbLs, flags: withMerger(nil),
		summary: "levels, tables, blob files, logs, the manifest and stats of a database",
		help: `Follows the database (no lock: another process may be writing it) and
prints its manifest, the tables of each level (number, size, entries,
tombstones, range deletions, key range, sequence numbers, and the bytes
of values each keeps in blob files), its blob files (size, values, the
bytes of values live tables name and the garbage no table names), its
logs, and the entries replayed from the logs into the memstore (puts,
deletions and range deletions) with the memory it takes. The blob file
column and section appear when the database has blob files.

example:
  strata db ls /var/lib/app/db`,
	},
	{
		name: "db scan", args: "DIR", nargs: 1, run: dbScan, flags: withMerger(scanFlags),
		summary: "print the key-value pairs, in key order",
		help: `Follows the database (no lock: another process may be writing it) and
prints every live key and its value, in key order (--reverse: from the
last key down), within the bounds given.

examples:
  strata db scan /var/lib/app/db --prefix user: --limit 10
  strata db scan /var/lib/app/db --lower '"\x18\x86"' --upper 0x1886` + keySyntax,
	},
	{
		name: "db get", args: "DIR KEY", nargs: 2, run: dbGet, flags: withMerger(nil),
		summary: "print the value of a key (exit status 1 if it has none)",
		help: `Follows the database (no lock: another process may be writing it) and
prints KEY's value. A key with no value is an error, with exit status 1.

examples:
  strata db get /var/lib/app/db user:42
  strata db get /var/lib/app/db '"\x18\x86"'` + keySyntax,
	},
	{
		name: "db put", args: "DIR KEY VALUE", nargs: 3, run: dbPut, flags: withMerger(putFlags),
		summary: "write a value, synced",
		help: `Opens the database for writing and writes VALUE under KEY, synced, then
closes it. DIR must hold a database, unless --create is given.

examples:
  strata db put /var/lib/app/db user:42 '{"name":"Ada"}'
  strata db put /var/lib/app/db '"\x18\x86"' '"\x00"'` + keySyntax,
	},
	{
		name: "db delete", args: "DIR KEY", nargs: 2, run: dbDelete, flags: withMerger(nil),
		summary: "delete a key, synced",
		help: `Opens the database for writing and deletes KEY, synced.

example:
  strata db delete /var/lib/app/db user:42` + keySyntax,
	},
	{
		name: "db verify", args: "DIR", nargs: 1, run: dbVerify,
		summary: "check every checksum and the manifest; exit status 1 on damage",
		help: `Reads CURRENT, the manifest, every block of every live table, every
blob file and every log, checks every checksum and that the manifest
agrees with the files (each table there, of its size, with its key range;
levels disjoint; each blob file there, of its size, identity and values,
and every value a table names in one there). It
prints each damaged file and offset, and goes on past damage to report
all it can reach. Exit status 1 when anything is damaged, 0 when all is
whole. It never writes; what a crash leaves and Open repairs (a torn log
tail) is printed as a note, not as damage. It takes no lock: a database
another process is writing is verified as it runs, and damage is
reported only where a second pass finds the same.

example:
  strata db verify /var/lib/app/db`,
	},
	{
		name: "db compact", args: "DIR", nargs: 1, run: dbCompact, flags: withMerger(nil),
		summary: "compact the whole database",
		help: `Opens the database for writing, compacts everything down into the
deepest level that holds data (at least L1), dropping every deleted or
overwritten version, and prints the levels before and after.

example:
  strata db compact /var/lib/app/db`,
	},
	{
		name: "db checkpoint", args: "DIR DEST", nargs: 2, run: dbCheckpoint, flags: withMerger(nil),
		summary: "write a consistent copy of the database into DEST",
		help: `Follows the database (no lock: another process may be writing it) and
writes a checkpoint into DEST, which must not exist or be empty: tables
are hard-linked where the filesystem allows, copied otherwise. DEST opens
as a database of its own.

example:
  strata db checkpoint /var/lib/app/db /backup/db-2026-11-25`,
	},
	{
		name: "db stats", args: "DIR", nargs: 1, run: dbStats, flags: withMerger(statsFlags),
		summary: "print the metrics of a database, once or every --watch interval",
		help: `Follows the database (no lock: another process may be writing it) and
prints its metrics: a table of the levels (tables, size, compaction
score, bytes in, written and read, write amplification), read
amplification, memstores and the block cache. A follower sees the files,
not the writer's process: latencies, stalls and transactions are the
writer's, which its own DB.Metrics (or PublishExpvar) shows. With --watch
INTERVAL it catches up and prints them again every INTERVAL (--count
times, 0: until interrupted).

examples:
  strata db stats /var/lib/app/db
  strata db stats /var/lib/app/db --watch 2s`,
	},
	{
		name: "manifest dump", args: "DIR|FILE", nargs: 1, run: manifestDump,
		summary: "print every edit of the manifest",
		help: `Prints each edit of a manifest: tables added (with the values each keeps
in blob files) and deleted, blob files added and deleted, logs started
and closed, the counters. Given a database directory, the manifest CURRENT
names. Damage ends the dump with an error naming the offset, after
everything before it.

example:
  strata manifest dump /var/lib/app/db`,
	},
	{
		name: "log dump", args: "FILE", nargs: 1, run: logDump, flags: logFlags,
		summary: "print the batches of a write-ahead log, with sequence numbers",
		help: `Prints each batch of a log: its offset, first sequence number and ops.
The format is the one the manifest beside FILE records (--format to say).
Damage ends the dump with an error naming the offset, after everything
before it.

example:
  strata log dump /var/lib/app/db/000012.log`,
	},
	{
		name: "sst dump", args: "FILE", nargs: 1, run: sstDump, flags: sstFlags,
		summary: "print a table's properties, index, bloom filter and range deletions",
		help: `Prints a table's properties, its index (one entry per data block), its
bloom filter and range deletions, and with --entries every entry. A value
the table keeps in a blob file is read from that file beside the table,
as in its database; where the file is not there, the value's handle
prints instead: blob 000012 @ 8 (4096 bytes), the file, the offset of
the value's record and the value's length.

example:
  strata sst dump /var/lib/app/db/000010.sst --entries`,
	},
	{
		name: "sst verify", args: "FILE", nargs: 1, run: sstVerify,
		summary: "read every block of a table and check it; exit status 1 on damage",
		help: `Reads every block of a table, checks its checksum, layout and key order,
and prints each damage with its offset; a table that does not open is
scanned record by record for the rest of its damage. It verifies the
table's blocks only: the values it keeps in blob files are checked by
blob verify, file by file, and by db verify, which also reads every value
a table names in one.

example:
  strata sst verify /var/lib/app/db/000010.sst`,
	},
	{
		name: "blob dump", args: "FILE", nargs: 1, run: blobDump,
		summary: "print each value of a blob file, then its trailer",
		help: `Prints each value of a blob file, the values a database keeps apart from
its tables: the offset of its record (what a table's handle names), the
record's size on disk, the value's length, how it is stored and the value,
as --value-format and --hex say. Then the trailer: the file's number and
identity, its count of values and their bytes. Damage ends the dump with
an error naming the offset, after everything before it.

examples:
  strata blob dump /var/lib/app/db/000011.blob
  strata blob dump /var/lib/app/db/000011.blob --value-format hex`,
	},
	{
		name: "blob verify", args: "FILE", nargs: 1, run: blobVerify,
		summary: "read every value of a blob file and check it; exit status 1 on damage",
		help: `Reads the trailer and every value of a blob file, checks each checksum and
that the values are the trailer's count and bytes, and prints the damage
with its offset. It checks the file on its own: whether the tables name
values that are there is db verify's to check.

example:
  strata blob verify /var/lib/app/db/000011.blob`,
	},
	{
		name: "rio dump", args: "FILE", nargs: 1, run: rioDump, flags: rioFlags,
		summary: "print each record of a recordio file (Strata's or go-sstables' v1 to v4)",
		help: `Prints a recordio file's version and codec, then each record's offset,
size on disk, length and how it is stored. Damage ends the dump, after
everything before it; with --resync it skips to the next valid record.

example:
  strata rio dump data.rio --resync`,
	},
	{
		name: "rio verify", args: "FILE", nargs: 1, run: rioVerify,
		summary: "check every record of a recordio file; exit status 1 on damage",
		help: `Reads every record of a recordio file and prints each damaged place,
skipping past it to the next valid record. go-sstables' formats carry no
payload checksum (v1 to v3 none at all): only Strata's format detects
every damaged byte.

example:
  strata rio verify data.rio`,
	},
}
