package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/magiconair/properties"
	"github.com/stretchr/testify/require"
)

func TestBindingRoundTrips(t *testing.T) {
	p := properties.NewProperties()
	p.Set(propPath, filepath.Join(t.TempDir(), "db"))
	p.Set("command", "load")
	p.Set("fieldcount", "3")
	db, err := strataCreator{}.Create(p)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	row := map[string][]byte{"field0": []byte("a"), "field1": []byte("bb"), "field2": {}}
	for _, k := range []string{"user1", "user2", "user3"} {
		require.NoError(t, db.Insert(ctx, "usertable", k, row))
	}
	got, err := db.Read(ctx, "usertable", "user2", nil)
	require.NoError(t, err)
	require.Equal(t, row, got)
	got, err = db.Read(ctx, "usertable", "user2", []string{"field1"})
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"field1": []byte("bb")}, got)

	// An update of one field keeps the others.
	require.NoError(t, db.Update(ctx, "usertable", "user2", map[string][]byte{"field0": []byte("z")}))
	got, err = db.Read(ctx, "usertable", "user2", nil)
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"field0": []byte("z"), "field1": []byte("bb"), "field2": {}}, got)

	rows, err := db.Scan(ctx, "usertable", "user2", 10, nil)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.NoError(t, db.Delete(ctx, "usertable", "user1"))
	_, err = db.Read(ctx, "usertable", "user1", nil)
	require.Error(t, err)
	rows, err = db.Scan(ctx, "usertable", "user0", 10, nil)
	require.NoError(t, err)
	require.Len(t, rows, 2)
}
