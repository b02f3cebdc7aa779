package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/prop"
	"github.com/pingcap/go-ycsb/pkg/ycsb"
	"github.com/stratadb/strata/simpledb"
)

// Properties of the strata binding.
const (
	propPath         = "strata.path"         // database directory; default /tmp/strata-ycsb
	propMemstoreSize = "strata.memstoresize" // bytes; default simpledb's
	propSync         = "strata.sync"         // synced writes; default true
	propDropData     = "strata.dropdata"     // remove the directory before a load; default true
)

func init() {
	ycsb.RegisterDBCreator("strata", strataCreator{})
}

type strataCreator struct{}

func (strataCreator) Create(p *properties.Properties) (ycsb.DB, error) {
	path := p.GetString(propPath, "/tmp/strata-ycsb")
	if p.GetString(prop.Command, "") == "load" && p.GetBool(propDropData, true) {
		if err := os.RemoveAll(path); err != nil {
			return nil, err
		}
	}
	opts := &simpledb.Options{
		MemstoreSize: p.GetInt64(propMemstoreSize, 0),
		NoSync:       !p.GetBool(propSync, true),
	}
	db, err := simpledb.Open(path, opts)
	if err != nil {
		return nil, err
	}
	return &strataDB{
		db:            db,
		fieldCount:    int(p.GetInt64(prop.FieldCount, prop.FieldCountDefault)),
		writeAllField: p.GetBool(prop.WriteAllFields, prop.WriteAllFieldsDefault),
	}, nil
}

// strataDB stores each row as one value: the row key is table/key, and the
// value the row's fields, each a uvarint-prefixed name and value, sorted by
// name.
type strataDB struct {
	db            *simpledb.DB
	fieldCount    int
	writeAllField bool
}

func (s *strataDB) Close() error { return s.db.Close() }

func (s *strataDB) InitThread(ctx context.Context, _, _ int) context.Context { return ctx }

func (s *strataDB) CleanupThread(context.Context) {}

func rowKey(table, key string) []byte { return []byte(table + "/" + key) }

func encodeRow(fields map[string][]byte) []byte {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	var b []byte
	for _, name := range names {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendUvarint(b, uint64(len(fields[name])))
		b = append(b, fields[name]...)
	}
	return b
}

var errBadRow = errors.New("strata: malformed row")

// decodeRow returns the row's fields, or only those named in want (nil or
// empty: all).
func decodeRow(b []byte, want []string) (map[string][]byte, error) {
	row := map[string][]byte{}
	next := func() ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, errBadRow
		}
		v := b[k : k+int(n)]
		b = b[k+int(n):]
		return v, nil
	}
	for len(b) > 0 {
		name, err := next()
		if err != nil {
			return nil, err
		}
		value, err := next()
		if err != nil {
			return nil, err
		}
		if len(want) == 0 || slices.Contains(want, string(name)) {
			row[string(name)] = bytes.Clone(value)
		}
	}
	return row, nil
}

func (s *strataDB) Read(_ context.Context, table, key string, fields []string) (map[string][]byte, error) {
	v, err := s.db.Get(rowKey(table, key))
	if err != nil {
		return nil, err
	}
	return decodeRow(v, fields)
}

// Scan is a real range scan: count rows of the table from startKey on.
func (s *strataDB) Scan(_ context.Context, table, startKey string, count int, fields []string) ([]map[string][]byte, error) {
	it, err := s.db.NewIterator(rowKey(table, startKey), []byte(table+"0")) // '0' follows '/'
	if err != nil {
		return nil, err
	}
	defer it.Close()
	rows := make([]map[string][]byte, 0, count)
	for ok := it.First(); ok && len(rows) < count; ok = it.Next() {
		row, err := decodeRow(it.Value(), fields)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, it.Err()
}

// Update writes the given fields; with fewer than all of them it reads the
// row and merges, so the other fields keep their values.
func (s *strataDB) Update(ctx context.Context, table, key string, values map[string][]byte) error {
	if !s.writeAllField && len(values) < s.fieldCount {
		row, err := s.Read(ctx, table, key, nil)
		if err != nil {
			return fmt.Errorf("update %s: %w", key, err)
		}
		for name, v := range values {
			row[name] = v
		}
		values = row
	}
	return s.db.Put(rowKey(table, key), encodeRow(values), simpledb.DefaultSync)
}

func (s *strataDB) Insert(_ context.Context, table, key string, values map[string][]byte) error {
	return s.db.Put(rowKey(table, key), encodeRow(values), simpledb.DefaultSync)
}

func (s *strataDB) Delete(_ context.Context, table, key string) error {
	return s.db.Delete(rowKey(table, key), simpledb.DefaultSync)
}
