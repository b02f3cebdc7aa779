// Command example serves a Strata database's metrics on a local port, for
// Prometheus at /metrics and as expvar's JSON at /debug/vars, while it
// writes and reads counters:
//
//	go run ./example -addr localhost:9411
//	curl -s localhost:9411/metrics | grep strata_commit
//	curl -s localhost:9411/debug/vars | jq .strata
package main

import (
	"expvar"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stratadb/strata/prometheus"
	"github.com/stratadb/strata/simpledb"
)

func main() {
	addr := flag.String("addr", "localhost:9411", "where to serve /metrics and /debug/vars")
	dir := flag.String("dir", "", "the database's directory (default: a temporary one)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "strata-metrics-example")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	db, err := simpledb.Open(*dir, &simpledb.Options{Merger: simpledb.Uint64AddMerger})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(strataprom.NewCollector(db, nil))
	if err := db.PublishExpvar("strata"); err != nil {
		log.Fatal(err)
	}
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	http.Handle("/debug/vars", expvar.Handler())
	go func() { log.Fatal(http.ListenAndServe(*addr, nil)) }()
	fmt.Printf("serving http://%s/metrics and http://%s/debug/vars\n", *addr, *addr)

	// Work to watch: counters merged and read, a synced write now and then.
	for i := 0; ; i++ {
		key := fmt.Appendf(nil, "counter/%03d", rand.IntN(1000))
		opts := simpledb.NoSync
		if i%100 == 0 {
			opts = simpledb.Sync
		}
		if err := db.Merge(key, simpledb.EncodeCounter(1), opts); err != nil {
			log.Fatal(err)
		}
		if _, err := db.Get(key); err != nil {
			log.Fatal(err)
		}
		if i%1000 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}
