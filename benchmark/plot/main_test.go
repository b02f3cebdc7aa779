package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAndRender(t *testing.T) {
	out := `goos: linux
BenchmarkRecordIOWrite/RecordSize1k-2         	 4223059	       293.0 ns/op	3495.00 MB/s	       0 B/op	       0 allocs/op
BenchmarkSimpleDBFillSeq-2                 	       1	1089666140 ns/op	 106.45 MB/s	    935992 ops/s	310106624 B/op	 3003402 allocs/op
PASS`
	results, err := parse(strings.NewReader(out))
	require.NoError(t, err)
	require.Equal(t, 3495.0, results["BenchmarkRecordIOWrite/RecordSize1k"]["MB/s"])
	require.Equal(t, 935992.0, results["BenchmarkSimpleDBFillSeq"]["ops/s"])

	svg, missing := render(results)
	require.True(t, strings.HasPrefix(svg, "<svg"))
	require.Contains(t, svg, "3495 MB/s")
	require.Contains(t, svg, "936K ops/s")
	require.Contains(t, svg, "not measured")
	require.Contains(t, missing, "BenchmarkSimpleDBScan")
	require.NotContains(t, missing, "BenchmarkSimpleDBFillSeq")
}
