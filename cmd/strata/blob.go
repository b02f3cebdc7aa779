package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/internal/filenames"
	"github.com/stratadb/strata/internal/units"
	"github.com/stratadb/strata/recordio"
	"github.com/stratadb/strata/sstables"
)

// openBlobFile opens the blob file at path for blob dump and blob verify.
// A file whose trailer does not read is damage, an error matching
// ErrCorruption (ErrBadBlob: "bad blob file"), after which the values
// before the trailer can still be read; a file that is not one a blob file
// could be is a usage error.
func openBlobFile(path string) (*sstables.BlobReader, error) {
	if err := checkRecordio(path, "a blob file"); err != nil {
		return nil, err
	}
	r, err := sstables.OpenBlob(path, &sstables.ReaderOptions{NoMmap: true})
	return r, notA(path, "a blob file", err)
}

func blobDump(c *cli, args []string) error {
	path := args[0]
	br, err := openBlobFile(path)
	var trailerErr error
	if errors.Is(err, sstables.ErrCorruption) {
		trailerErr, err = err, nil // shown after the values before it
	}
	if err != nil {
		return err
	}
	if br != nil {
		defer br.Close()
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	rd, err := recordio.Open(path, &recordio.ReaderOptions{NoMmap: true, ZeroCopy: true})
	if err != nil {
		return notA(path, "a blob file", err)
	}
	defer rd.Close()
	p := c.out
	if !p.json {
		p.line("%s: blob file, codec %s", path, rd.Header().Codec)
		p.row("offset", "size", "length", "stored", "value")
	}
	values, trailerAt := 0, int64(-1)
	for {
		value, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err // damage ends the dump, after the values before it
		}
		ri := rd.Info()
		if ri.Offset+ri.Size == info.Size() {
			// The last record is the trailer, which OpenBlob has read.
			trailerAt = ri.Offset
			break
		}
		values++
		stored := "plain"
		if ri.Compressed {
			stored = rd.Header().Codec.String()
		}
		if p.json {
			obj := map[string]any{"type": "value", "offset": ri.Offset, "size": ri.Size, "length": ri.Length, "stored": stored}
			p.valueField(obj, "value", value)
			p.object(obj)
		} else {
			p.row(fmt.Sprint(ri.Offset), fmt.Sprint(ri.Size), fmt.Sprint(ri.Length), stored, p.value(value))
		}
	}
	if trailerErr != nil {
		return trailerErr
	}
	m := br.Metadata()
	if p.json {
		p.object(map[string]any{"type": "trailer", "offset": trailerAt, "number": m.FileNum, "id": fmt.Sprintf("%016x", m.ID),
			"values": m.Values, "value_bytes": m.ValueBytes, "file_size": m.FileSize})
		return nil
	}
	p.line("%d value(s)", values)
	p.line("trailer at %d: blob file %06d, id %016x, %d values, %s (%d bytes); file %s",
		trailerAt, m.FileNum, m.ID, m.Values, units.Bytes(int64(m.ValueBytes)), m.ValueBytes, units.Bytes(int64(m.FileSize)))
	return nil
}

func blobVerify(c *cli, args []string) error {
	path := args[0]
	br, err := openBlobFile(path)
	if err != nil && !errors.Is(err, sstables.ErrCorruption) {
		return err
	}
	var damage []error
	var m sstables.BlobMetadata
	trailerRead := err == nil
	if !trailerRead {
		damage = append(damage, err)
	} else {
		m = br.Metadata()
		err := br.Verify()
		br.Close()
		switch {
		case errors.Is(err, sstables.ErrCorruption):
			damage = append(damage, err)
		case err != nil:
			return err
		}
	}
	printDamage(c.out, damage)
	if c.out.json {
		c.out.object(map[string]any{"type": "summary", "number": m.FileNum, "values": m.Values, "value_bytes": m.ValueBytes,
			"bytes": m.FileSize, "damaged": len(damage)})
	} else {
		state := "whole"
		if len(damage) > 0 {
			state = fmt.Sprintf("%d damage(s) found", len(damage))
		}
		what := filepath.Base(path) + " (its trailer does not read)"
		if trailerRead {
			what = fmt.Sprintf("blob file %06d (id %016x), %d values (%s) by its trailer", m.FileNum, m.ID, m.Values, units.Bytes(int64(m.ValueBytes)))
		}
		c.out.line("verified %s: %s", what, state)
	}
	if len(damage) > 0 {
		return errDamaged
	}
	return nil
}

// dirBlobs gives a table the blob files of its directory, so that sst dump
// of a table in a database shows the values it keeps in them: each file
// is opened at its first use and held until close.
type dirBlobs struct {
	dir  string
	open map[uint64]*sstables.BlobReader
}

func newDirBlobs(dir string) *dirBlobs {
	return &dirBlobs{dir: dir, open: map[uint64]*sstables.BlobReader{}}
}

// Blob opens blob file num of the directory, or returns it open.
func (b *dirBlobs) Blob(num uint64) (*sstables.BlobReader, error) {
	if r := b.open[num]; r != nil {
		return r, nil
	}
	r, err := sstables.OpenBlob(filenames.BlobPath(b.dir, num), &sstables.ReaderOptions{NoMmap: true})
	if err != nil {
		return nil, err
	}
	b.open[num] = r
	return r, nil
}

// ReleaseBlob does nothing: the files stay open until close.
func (*dirBlobs) ReleaseBlob(*sstables.BlobReader) {}

// has reports whether blob file num lies in the directory: a table copied
// out of its database has its handles shown instead of its values.
func (b *dirBlobs) has(num uint64) bool {
	if b.open[num] != nil {
		return true
	}
	_, err := os.Stat(filenames.BlobPath(b.dir, num))
	return err == nil
}

func (b *dirBlobs) close() {
	for _, r := range b.open {
		r.Close()
	}
}

// blobHandle shows where a value lies that sst dump does not read.
func blobHandle(h sstables.BlobHandle) string {
	return fmt.Sprintf("blob %06d @ %d (%d bytes)", h.FileNum, h.Offset, h.ValueLen)
}

// blobRef shows a table's reference into a blob file: the values it
// keeps there.
func blobRef(num, values, valueBytes uint64) string {
	return fmt.Sprintf("%d values (%s) in %06d.blob", values, units.Bytes(int64(valueBytes)), num)
}

// blobRefObject is a table's reference into a blob file, for --json.
func blobRefObject(num, values, valueBytes uint64) map[string]any {
	return map[string]any{"number": num, "values": values, "value_bytes": valueBytes}
}
