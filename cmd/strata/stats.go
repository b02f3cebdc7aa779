package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/signal"
	"time"
)

func statsFlags(fs *flag.FlagSet, c *cli) {
	fs.DurationVar(&c.watch, "watch", 0, "catch up and print again every INTERVAL (0: once)")
	fs.IntVar(&c.limit, "count", 0, "with --watch, print this many times (0: until interrupted)")
}

func dbStats(c *cli, args []string) error {
	if c.watch < 0 {
		return usagef("--watch %v: want a positive interval", c.watch)
	}
	db, err := openDB(c, args[0], true, false)
	if err != nil {
		return err
	}
	defer db.Close()
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	for n := 1; ; n++ {
		m := db.Metrics()
		if c.out.json {
			// Metrics' fields, as expvar publishes them.
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			obj := map[string]any{}
			if err := json.Unmarshal(b, &obj); err != nil {
				return err
			}
			obj["time"] = time.Now().UTC().Format(time.RFC3339Nano)
			c.out.object(obj)
		} else {
			if c.watch > 0 {
				c.out.line("%s", time.Now().Format(time.DateTime))
			}
			c.out.line("%s", m.String())
		}
		if err := c.out.w.Flush(); err != nil {
			return err
		}
		if c.watch == 0 || n == c.limit {
			return nil
		}
		select {
		case <-interrupt:
			return nil
		case <-time.After(c.watch):
		}
		if err := db.CatchUp(); err != nil {
			return err
		}
	}
}
