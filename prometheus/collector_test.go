package strataprom

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stratadb/strata/simpledb"
	"github.com/stretchr/testify/require"
)

// A scrape of a registry holding the collector shows a database's
// metrics, by Prometheus' conventions (as its linter checks them), with
// the latencies as histograms.
func TestScrape(t *testing.T) {
	db, err := simpledb.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer db.Close()
	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, db.Put([]byte(k), []byte("v"), simpledb.Sync))
	}
	require.NoError(t, db.Put([]byte("doc"), make([]byte, 4096), simpledb.Sync)) // a value in a blob file
	require.NoError(t, db.Flush())
	for range 50 {
		_, err := db.Get([]byte("a"))
		require.NoError(t, err)
	}

	c := NewCollector(db, &Options{ConstLabels: prometheus.Labels{"db": "orders"}})
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	require.Empty(t, problems)

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, want := range []string{
		`# TYPE strata_writes_total counter`,
		`strata_writes_total{db="orders"} 4`,
		`strata_flushes_total{db="orders"} 1`,
		`# TYPE strata_level_tables gauge`,
		`strata_level_tables{db="orders",level="0"} 1`,
		`# TYPE strata_log_sync_duration_seconds histogram`,
		`strata_log_sync_duration_seconds_count{db="orders"} 4`,
		`strata_log_sync_duration_seconds_bucket{db="orders",le="+Inf"} 4`,
		`# TYPE strata_blob_files gauge`,
		`strata_blob_files{db="orders"} 1`,
		`strata_blob_value_bytes{db="orders"} 4096`,
		`strata_blob_garbage_bytes{db="orders"} 0`,
		`strata_flush_duration_seconds_count{db="orders"} 1`,
		`# TYPE strata_get_duration_seconds histogram`,
	} {
		require.Contains(t, string(body), want)
	}
}
