// Package vfs is the filesystem every Strata layer reads and writes through.
//
// Nothing in the library calls package os for its data files: recordio,
// sstables and simpledb take an FS (nil means Default, the operating
// system's), so tests can substitute a filesystem that simulates a power
// loss or injects I/O errors, and an application can run a database
// entirely in memory.
//
// The interface is deliberately small: create, open, read, write, ReadAt,
// sync, rename, remove, list, make a directory, sync a directory, lock,
// reuse a file (rename it and write over it from its start, as a
// write-ahead log recycles an obsolete one), and hard-link a file (as a
// checkpoint shares a database's immutable tables; LinkOrCopy copies where
// the filesystem cannot link).
// Durability follows POSIX: data written to a File is durable after
// File.Sync; a created, renamed or removed name is durable after SyncDir of
// its parent directory.
//
// NewMem returns a MemFS, an in-memory FS that tracks exactly that: each
// file's bytes now and as of its last Sync, each directory's entries now
// and as of its last SyncDir. MemFS.CrashClone returns what a power loss at
// that instant leaves, shaped by CrashOptions:
//
//	CrashOptions{}                           synced bytes only
//	CrashOptions{Rand: r}                    plus the unsynced writes up to
//	                                         a random offset (a torn tail)
//	CrashOptions{Rand: r, PageLoss: true}    plus a random length of them in
//	                                         which each page is kept or lost,
//	                                         in any order: a lost page reads
//	                                         as last synced, or as zeros
//
// Directory entries are always those of each directory's last sync, and the
// same filesystem and seed always give the same clone, so a failing crash
// test replays.
//
// The package is public, not internal, because the Options of the upper
// layers carry an FS: callers must be able to name the type to supply one.
package vfs
