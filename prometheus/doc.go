// Package strataprom exports a Strata database's metrics to Prometheus: a
// collector, in a module of its own so that the library's go.mod stays
// free of the Prometheus client.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(strataprom.NewCollector(db, nil))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Each scrape calls DB.Metrics once (a few microseconds) and exports it
// with Prometheus' conventions: names under the namespace "strata", sizes
// in _bytes, durations in _seconds, running totals as counters (_total),
// levels as a "level" label, and the latencies of commits, Gets, log
// fsyncs, flushes and compactions as histograms whose buckets are powers
// of two from 1 µs. The example directory serves it beside expvar.
package strataprom
