package sstables

import (
	"fmt"
	"path/filepath"

	"github.com/stratadb/strata/internal/errs"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/vfs"
)

// durableFile is the file a Writer or a BlobWriter writes: under a
// temporary name (the final name plus ".tmp"), and under its final name
// only once complete and durable, synced, renamed and its directory
// synced. A crash before that leaves at most the temporary file, never a
// partial one under the final name.
type durableFile struct {
	name, tmpName string
	fs            vfs.FS
	rw            *recordio.Writer
	renamed       bool  // the file has its final name
	err           error // sticky; ErrClosed once closed
}

// createDurable creates the temporary file of name, written with o's FS,
// compression and BytesPerSync.
func createDurable(name string, o *WriterOptions) (durableFile, error) {
	f := durableFile{name: name, tmpName: name + ".tmp", fs: o.FS}
	rw, err := recordio.Create(f.tmpName, &recordio.WriterOptions{FS: o.FS, Compression: o.Compression, BytesPerSync: o.BytesPerSync})
	if err != nil {
		return f, errs.Errorf("sstables: %w", err)
	}
	f.rw = rw
	return f, nil
}

// writeLast appends rec, uncompressed, as the file's last record, which
// must take size bytes: a footer or a trailer that a reader finds at a
// fixed distance from the end.
func (f *durableFile) writeLast(rec []byte, size int64, what string) error {
	before := f.rw.Size()
	if _, err := f.rw.WriteUncompressed(rec); err != nil {
		return err
	}
	if got := f.rw.Size() - before; got != size {
		return fmt.Errorf("sstables: %s record is %d bytes, want %d", what, got, size)
	}
	return nil
}

// close runs finish, which writes what ends the file, then makes the file
// durable under its name; on failure it removes the file. It returns the
// sticky error of an earlier failure or Close.
func (f *durableFile) close(finish func() error) error {
	if f.err != nil {
		if f.err != ErrClosed {
			f.discard()
		}
		return f.err
	}
	err := finish()
	if err == nil {
		err = f.commit()
	}
	if err != nil {
		f.discard()
		return f.fail(err)
	}
	f.err = ErrClosed
	return nil
}

// commit syncs and closes the file, renames it to its name and syncs the
// directory.
func (f *durableFile) commit() error {
	if err := f.rw.Close(); err != nil {
		return err
	}
	if err := f.fs.Rename(f.tmpName, f.name); err != nil {
		return err
	}
	f.renamed = true
	return f.fs.SyncDir(filepath.Dir(f.name))
}

// abort discards the file, unless it is closed.
func (f *durableFile) abort() error {
	if f.err == ErrClosed {
		return ErrClosed
	}
	f.discard()
	f.err = ErrClosed
	return nil
}

// discard removes what a failed or aborted file left: the temporary file,
// or the final one if the directory sync after the rename failed.
func (f *durableFile) discard() {
	f.rw.Close()
	if f.renamed {
		f.fs.Remove(f.name)
	} else {
		f.fs.Remove(f.tmpName)
	}
}

// fail makes err, wrapped with the file's name, the sticky error, unless
// there is one, and returns the sticky error.
func (f *durableFile) fail(err error) error {
	if f.err == nil {
		f.err = errs.Errorf("sstables: write %s: %w", f.name, err)
	}
	return f.err
}
