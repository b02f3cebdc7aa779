// Package vfs is the filesystem every Strata layer reads and writes through.
//
// Nothing in the library calls package os for its data files: recordio,
// sstables and simpledb take an FS (nil means Default, the operating
// system's), so tests can substitute a filesystem that simulates a power
// loss or injects I/O errors, and an application can run a database
// entirely in memory.
//
// The interface is deliberately small: create, open, read, write, ReadAt,
// sync, rename, remove, list, make a directory, sync a directory, and lock.
// Durability follows POSIX: data written to a File is durable after
// File.Sync; a created, renamed or removed name is durable after SyncDir of
// its parent directory.
//
// The package is public, not internal, because the Options of the upper
// layers carry an FS: callers must be able to name the type to supply one.
package vfs
