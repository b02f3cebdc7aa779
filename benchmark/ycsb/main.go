// Command ycsb runs YCSB workloads against Strata through go-ycsb's core
// (its workload generator, client and measurements), with a strata binding
// registered as the database:
//
//	go run . load strata -P workloads/workloada -p threadcount=16 -p strata.sync=false
//	go run . run strata -P workloads/workloada -p threadcount=16 -p strata.sync=false
//
// It prints go-ycsb's own result lines. Properties of the binding:
// strata.path, strata.memstoresize, strata.sync, strata.dropdata.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/client"
	"github.com/pingcap/go-ycsb/pkg/measurement"
	"github.com/pingcap/go-ycsb/pkg/prop"
	_ "github.com/pingcap/go-ycsb/pkg/workload"
	"github.com/pingcap/go-ycsb/pkg/ycsb"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if len(os.Args) < 3 || (os.Args[1] != "load" && os.Args[1] != "run") {
		fmt.Fprintln(os.Stderr, "usage: ycsb load|run strata [-P file]... [-p name=value]...")
		os.Exit(2)
	}
	command, dbName := os.Args[1], os.Args[2]
	var files, values listFlag
	fs := flag.NewFlagSet(command, flag.ExitOnError)
	fs.Var(&files, "P", "a property file (repeatable)")
	fs.Var(&values, "p", "a property, name=value (repeatable)")
	fs.Parse(os.Args[3:])

	p := properties.NewProperties()
	if len(files) > 0 {
		p = properties.MustLoadFiles(files, properties.UTF8, false)
	}
	for _, v := range values {
		name, value, ok := strings.Cut(v, "=")
		if !ok {
			log.Fatalf("bad property %q: want name=value", v)
		}
		p.Set(name, value)
	}
	p.Set(prop.Command, command)
	p.Set(prop.DoTransactions, fmt.Sprint(command == "run"))

	measurement.InitMeasure(p)
	workload, err := ycsb.GetWorkloadCreator(p.GetString(prop.Workload, "core")).Create(p)
	if err != nil {
		log.Fatalf("workload: %v", err)
	}
	creator := ycsb.GetDBCreator(dbName)
	if creator == nil {
		log.Fatalf("unknown database %q (this runner registers strata)", dbName)
	}
	db, err := creator.Create(p)
	if err != nil {
		log.Fatalf("open %s: %v", dbName, err)
	}
	start := time.Now()
	client.NewClient(p, workload, client.DbWrapper{DB: db}).Run(context.Background())
	fmt.Printf("%s: finished in %s\n", command, time.Since(start).Round(time.Millisecond))
	measurement.Output()
	if err := db.Close(); err != nil {
		log.Fatalf("close: %v", err)
	}
}
